// A detection thread: detects the frames the scoring process hands it, one at a time, with
// the settings it was started with (detect-threads.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { detectFrame } from './detector.js';
import type { DetectThreadRequest, DetectThreadReply, DetectThreadSettings } from './detect-threads.js';

const settings = (workerData as { settings: DetectThreadSettings }).settings;
const port = parentPort!;

port.on('message', (req: DetectThreadRequest) => {
  let reply: DetectThreadReply;
  try {
    const image = { width: req.width, height: req.height, data: req.data };
    reply = { id: req.id, found: detectFrame(image, req.conf, req.smallLikely, settings.params, settings.thresholds, settings.stemParams) };
  } catch (err) {
    reply = { id: req.id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
