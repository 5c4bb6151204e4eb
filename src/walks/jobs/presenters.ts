import { presentInstant } from '../../time/instants.js';
import { countsSchema, instantSchema } from '../../http/schemas.js';
import type { JsonSchema } from '../../http/route.js';
import { readStretchSeconds } from '../../vision/walk.js';
import { DEFAULT_OPTIONS, type ScoringOptions } from './options.js';
import type { StoredResult } from './result.js';
import { keptUntil, removedAt, type MediaPart } from './retention.js';
import type { WalkClipTable, WalkTable } from './tables.js';

/** Row → JSON of a walk (scoring job). Its id is `job_id` in every answer (docs/api-conventions.md, "Identifiers"). */
export function frameUrl(walkId: string, index: number, name: 'image.jpg' | 'overlay.jpg'): string {
  return `/api/observations/${walkId}/frames/${index}/${name}`;
}

const at = (iso: string | null, zone: string) => (iso === null ? null : presentInstant(iso, zone));
/** A done walk is all the way; a running one to the thousandth, which is finer than a person reads. */
const progressOf = (walk: WalkTable) => (walk.status === 'done' ? 1 : Math.round(walk.progress * 1000) / 1000);
/** The detector's counts, null until the walk is scored. */
export const modelCounts = (walk: WalkTable) =>
  walk.count_total === null
    ? null
    : { green: walk.count_green!, turning: walk.count_turning!, red: walk.count_red!, total: walk.count_total };
/** The counts after staff corrections (the detector's while there are none), null until the walk is scored. */
export const correctedCounts = (walk: WalkTable) =>
  walk.corrected_total === null
    ? null
    : { green: walk.corrected_green!, turning: walk.corrected_turning!, red: walk.corrected_red!, total: walk.corrected_total };

/** Days a scored walk's clips and frames are kept (WALK_CLIP_KEEP_DAYS, WALK_FRAME_KEEP_DAYS); 0 is for ever. */
export interface MediaKeepDays {
  clips: number;
  frames: number;
}

function presentMedia(walk: WalkTable, keep: MediaKeepDays, zone: string) {
  const part = (p: MediaPart) => {
    const removed = removedAt(walk, p);
    return { kept_until: removed === null ? at(keptUntil(walk.finished_at, keep[p]), zone) : null, removed_at: at(removed, zone) };
  };
  return { clips: part('clips'), frames: part('frames') };
}

export const correctedCountsSchema: JsonSchema = {
  oneOf: [countsSchema, { type: 'null' }],
  description:
    'The counts after staff corrections ({walk}/corrections: a ripeness changed, a fruit removed or added, counts set by hand); the same as counts while the walk has none; null until done.',
};

export function presentWalk(walk: WalkTable, clips: WalkClipTable[], keep: MediaKeepDays, zone = 'UTC') {
  const stored = { ...DEFAULT_OPTIONS, ...(JSON.parse(walk.options) as Partial<ScoringOptions>) };
  const result = walk.status === 'done' && walk.result ? (JSON.parse(walk.result) as StoredResult) : null;
  // conf_given is how the threshold was settled, not an option; once scored, the threshold is the one that ran.
  const { conf_given: _given, ...options } = { ...stored, conf: result?.detector.conf ?? stored.conf };
  return {
    job_id: walk.id,
    organization_id: walk.organization_id,
    status: walk.status,
    progress: progressOf(walk),
    error: walk.status === 'failed' ? walk.error : null,
    source: walk.source,
    example_key: walk.example_key,
    farm_id: walk.farm_id,
    greenhouse_id: walk.greenhouse_id,
    row_id: walk.row_id,
    cycle_id: walk.cycle_id,
    week: walk.week,
    mode: walk.mode,
    options,
    detector: walk.detector,
    attempts: walk.attempts,
    clips: clips.map((c) => ({
      position: c.position,
      name: c.original_name,
      kind: c.kind,
      format: c.format,
      size_bytes: c.size_bytes,
      sha256: c.sha256,
      width: c.width,
      height: c.height,
      duration_s: c.duration_s,
      read_s:
        Math.round(readStretchSeconds({ sampleSeconds: options.sample_seconds, maxFrames: options.max_frames }, c.duration_s) * 1000) /
        1000,
      status: c.status,
      progress: c.status === 'done' ? 1 : Math.round(c.progress * 1000) / 1000,
      frames: c.frames,
      error: c.error,
    })),
    counts: modelCounts(walk),
    corrected_counts: correctedCounts(walk),
    result: result && {
      detector: result.detector,
      counts: result.counts,
      frames: result.frames.map((f) => ({
        ...f,
        image_url: frameUrl(walk.id, f.index, 'image.jpg'),
        overlay_url: frameUrl(walk.id, f.index, 'overlay.jpg'),
      })),
      fruit: result.fruit,
      stems: result.stems,
      plants: result.plants,
      quality: result.quality,
    },
    media: presentMedia(walk, keep, zone),
    created_at: at(walk.created_at, zone)!,
    started_at: at(walk.started_at, zone),
    finished_at: at(walk.finished_at, zone),
    updated_at: at(walk.updated_at, zone)!,
    version: walk.version,
  };
}

const num = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'number', description, ...extra });
const nullableNum = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: ['number', 'null'], description, ...extra });
const nullableId = (description: string): JsonSchema => ({ type: ['string', 'null'], description });
const boxSchema: JsonSchema = {
  type: 'array',
  items: { type: 'number' },
  minItems: 4,
  maxItems: 4,
  description: 'Box [x1, y1, x2, y2] in pixels of the frame named beside it (the working frame: long side at most 1280 px).',
};
const statusSchema: JsonSchema = {
  enum: ['queued', 'running', 'done', 'failed'],
  description: 'queued: waiting for the runner; running: being scored; done: `result` is filled in; failed: `error` says why.',
};

const mediaPartSchema = (what: string): JsonSchema => ({
  type: 'object',
  required: ['kept_until', 'removed_at'],
  additionalProperties: false,
  description: what,
  properties: {
    kept_until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When they will be removed; null while the walk is not scored yet, when they are kept for ever, or once removed.',
    },
    removed_at: { type: ['string', 'null'], format: 'date-time', description: 'When they were removed; null while kept.' },
  },
});

const countWithReason = (what: string): JsonSchema => ({
  type: 'object',
  required: ['count', 'reason'],
  additionalProperties: false,
  description: `${what} counted along the walk (each once). When the detector cannot see ${what}, count is null and reason says why.`,
  properties: { count: { type: ['integer', 'null'] }, reason: { type: ['string', 'null'] } },
});

export const frameQualitySchema: JsonSchema = {
  type: 'object',
  required: ['sharpness', 'brightness', 'dark_fraction', 'bright_fraction', 'motion_px_per_s', 'score'],
  additionalProperties: false,
  properties: {
    sharpness: num('Focus, 0 to 1 (0.5 is the reference sharpness; below 0.35 counts as out of focus).'),
    brightness: num('Exposure: mean luma, 0 (black) to 1 (white); below 0.18 counts as too dark.'),
    dark_fraction: num('Share of near-black pixels, 0 to 1.'),
    bright_fraction: num('Share of blown-out pixels, 0 to 1.'),
    motion_px_per_s: nullableNum(
      "Camera motion since the previous sampled frame of the same clip, in pixels of the working frame per second; null for a clip's first frame and for photos.",
    ),
    score: num('How usable the frame is for counting, 0 to 1.'),
  },
};

export const walkSchema: JsonSchema = {
  type: 'object',
  required: [
    'job_id',
    'organization_id',
    'status',
    'progress',
    'error',
    'source',
    'example_key',
    'farm_id',
    'greenhouse_id',
    'row_id',
    'cycle_id',
    'week',
    'mode',
    'options',
    'detector',
    'attempts',
    'clips',
    'counts',
    'corrected_counts',
    'result',
    'media',
    'created_at',
    'started_at',
    'finished_at',
    'updated_at',
    'version',
  ],
  additionalProperties: false,
  properties: {
    job_id: { type: 'string', description: "The walk's id (UUIDv7): the job id, also walk_id in {walk} paths." },
    organization_id: { type: 'string' },
    status: statusSchema,
    progress: num('Share of the walk scored, 0 to 1 (1 only when done). Moves as frames are scored; stored at most every 250 ms.', {
      minimum: 0,
      maximum: 1,
    }),
    error: {
      type: ['string', 'null'],
      description: "Why the walk failed (e.g. ffmpeg's reason for a clip that does not decode); null unless failed.",
    },
    source: {
      enum: ['observation', 'cycle_video', 'cycle_batch', 'example'],
      description: 'How the walk was made: POST /api/observations, {cycle}/videos, {cycle}/videos/batch, or POST /api/examples/{key}.',
    },
    example_key: { type: ['string', 'null'], description: 'The example scored, for source "example".' },
    farm_id: nullableId("With cycle_id: the crop cycle's farm."),
    greenhouse_id: nullableId("With cycle_id: the crop cycle's greenhouse."),
    row_id: nullableId("With cycle_id: the crop cycle's row."),
    cycle_id: nullableId('The crop cycle the walk is saved to; null for POST /api/observations and examples.'),
    week: { type: ['string', 'null'], description: 'ISO week label the walk is saved to (with cycle_id).' },
    mode: { type: 'string', description: 'The mode asked for: auto, builtin, model, photo or video.' },
    options: {
      type: 'object',
      description:
        'The options the walk is scored with. A photo is one frame whatever the sampling, so the sampling fields and max_frames apply to video clips only; a walk of photos shows their defaults.',
      required: ['conf', 'sample_seconds', 'fast_sample_seconds', 'max_frames', 'mm_per_pixel'],
      additionalProperties: false,
      properties: {
        conf: num(
          "Detection threshold, 0 to 1: the one given, else the detector's own for what was uploaded (a model's manifest names its thresholds; the built-in detector's are 0.35 for photos only, 0.5 with a video clip). Once scored, the threshold that ran.",
        ),
        sample_seconds: num('Seconds between sampled frames of a video.', { 'x-unit': 's' }),
        fast_sample_seconds: nullableNum(
          'Adaptive sampling (sample_seconds was not given): seconds between sampled frames while the camera crosses more than a sixth of the frame per sample_seconds. Null: every sample_seconds, whatever the pace.',
          { 'x-unit': 's' },
        ),
        max_frames: {
          type: 'integer',
          description:
            'Most frames sampled from each clip at sample_seconds: a clip is read for at most max_frames × sample_seconds (adaptive sampling may score more frames in that stretch).',
        },
        mm_per_pixel: nullableNum(
          "Millimetres per pixel of the clip as filmed, at the fruit's distance; null: diameters are not measured.",
          { 'x-unit': 'mm/px' },
        ),
      },
    },
    detector: { type: ['string', 'null'], description: 'Name of the detector that scored the walk; null until it ran.' },
    attempts: { type: 'integer', description: 'Times the runner started scoring it (more than 1 after a restart interrupted it).' },
    clips: {
      type: 'array',
      description: 'The uploaded clips (or photos) in walking order, with per-clip progress.',
      items: {
        type: 'object',
        required: [
          'position',
          'name',
          'kind',
          'format',
          'size_bytes',
          'sha256',
          'width',
          'height',
          'duration_s',
          'read_s',
          'status',
          'progress',
          'frames',
          'error',
        ],
        additionalProperties: false,
        properties: {
          position: { type: 'integer', description: '0-based walking order.' },
          name: { type: 'string', description: 'File name as uploaded (for display only; the box stores it under its own name).' },
          kind: { enum: ['image', 'video'] },
          format: { type: 'string', description: 'Container found by content: jpeg, png, webp, heic, mp4, mov, mkv, webm or avi.' },
          size_bytes: { type: 'integer', 'x-unit': 'B' },
          sha256: { type: 'string', description: 'sha256 of the uploaded bytes, hex.' },
          width: { type: 'integer', description: 'Displayed width in pixels (rotation applied).' },
          height: { type: 'integer', description: 'Displayed height in pixels.' },
          duration_s: num('Length in seconds; 0 for a photo.', { 'x-unit': 's' }),
          read_s: num(
            'Seconds of the clip, from its start, that scoring reads: all of it, or max_frames × sample_seconds when the clip is longer (the walk then carries the warning clip_cut_short). 0 for a photo.',
            { 'x-unit': 's' },
          ),
          status: statusSchema,
          progress: num('Share of this clip scored, 0 to 1.'),
          frames: { type: 'integer', description: 'Frames of this clip scored so far.' },
          error: { type: ['string', 'null'], description: 'Why this clip failed the walk, when it did.' },
        },
      },
    },
    counts: {
      oneOf: [countsSchema, { type: 'null' }],
      description:
        'The model counts: fruit counted by ripeness by the detector (each fruit once); null until done. Staff corrections never change them.',
    },
    corrected_counts: correctedCountsSchema,
    result: {
      description: 'The scoring result; null until done.',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['detector', 'counts', 'frames', 'fruit', 'stems', 'plants', 'quality'],
          additionalProperties: false,
          properties: {
            detector: {
              type: 'object',
              required: ['name', 'kind', 'fallback_reason'],
              additionalProperties: false,
              properties: {
                name: { type: 'string' },
                kind: { type: 'string', description: 'builtin or onnx.' },
                fallback_reason: {
                  type: ['string', 'null'],
                  description: 'Why the built-in detector ran although a model is configured (mode auto).',
                },
                model: {
                  description:
                    'The model that scored the walk: its manifest file in MODELS_DIR, name, the SHA-256 of the ONNX file that ran, when it was made, and the thresholds it names. Null for the built-in detector; absent for walks scored before models were recorded.',
                  oneOf: [
                    { type: 'null' },
                    {
                      type: 'object',
                      required: ['manifest', 'name', 'sha256', 'created', 'conf'],
                      additionalProperties: false,
                      properties: {
                        manifest: { type: 'string' },
                        name: { type: 'string' },
                        sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
                        created: { type: ['string', 'null'] },
                        conf: {
                          oneOf: [
                            { type: 'null' },
                            {
                              type: 'object',
                              required: ['photo', 'video'],
                              additionalProperties: false,
                              properties: { photo: { type: 'number' }, video: { type: 'number' } },
                            },
                          ],
                        },
                      },
                    },
                  ],
                },
                conf: { type: 'number', description: 'The detection threshold the walk was scored at, 0 to 1.' },
              },
            },
            counts: countsSchema,
            frames: {
              type: 'array',
              description: 'Every scored frame, in walking order.',
              items: {
                type: 'object',
                required: ['index', 'clip', 'time_s', 'detections', 'width', 'height', 'quality', 'image_url', 'overlay_url'],
                additionalProperties: false,
                properties: {
                  index: { type: 'integer', description: 'Walk-wide frame number, 0-based: {frame} in the frames URL.' },
                  clip: { type: 'integer', description: 'Position of its clip.' },
                  time_s: num('Seconds into its clip.', { 'x-unit': 's' }),
                  detections: { type: 'integer', description: 'Detections at or above conf in this frame (fruit, stems and plants).' },
                  width: { type: 'integer', description: 'Working frame width, pixels.' },
                  height: { type: 'integer', description: 'Working frame height, pixels.' },
                  quality: frameQualitySchema,
                  image_url: { type: 'string', description: 'The frame as scored (JPEG).' },
                  overlay_url: {
                    type: 'string',
                    description:
                      'The frame with boxes coloured by ripeness (green, orange = turning, red; stems blue, plants purple) and track ids (JPEG).',
                  },
                },
              },
            },
            fruit: {
              type: 'array',
              description: 'Each fruit counted once, by tracking it across frames and clips.',
              items: {
                type: 'object',
                required: [
                  'track_id',
                  'ripeness',
                  'votes',
                  'box',
                  'frame',
                  'first_frame',
                  'last_frame',
                  'frames_seen',
                  'score',
                  'diameter_mm',
                ],
                additionalProperties: false,
                properties: {
                  track_id: {
                    type: 'integer',
                    description: 'Unique in the walk, numbered in counting order; a correction ({walk}/corrections) names a fruit by it.',
                  },
                  ripeness: { enum: ['green', 'turning', 'red'] },
                  votes: {
                    type: 'object',
                    description: 'Score-weighted votes of the frames that saw it, per ripeness.',
                    properties: { green: { type: 'number' }, turning: { type: 'number' }, red: { type: 'number' } },
                    required: ['green', 'turning', 'red'],
                  },
                  box: boxSchema,
                  frame: { type: 'integer', description: 'Frame with the best view (the box is in it).' },
                  first_frame: { type: 'integer' },
                  last_frame: { type: 'integer' },
                  frames_seen: { type: 'integer', description: 'Frames in which it was detected.' },
                  score: num('Best detector confidence, 0 to 1.'),
                  diameter_mm: nullableNum(
                    "Fruit diameter in mm (median of the box's short side along the track); null without mm_per_pixel.",
                    { 'x-unit': 'mm' },
                  ),
                },
              },
            },
            stems: countWithReason('stems'),
            plants: countWithReason('plants'),
            quality: {
              type: 'object',
              required: ['score', 'warnings'],
              additionalProperties: false,
              description: 'Whether the footage is good enough for the counts to be trusted. Per-frame measures are in frames[].quality.',
              properties: {
                score: num('Mean usability of the frames, 0 to 1.'),
                warnings: {
                  type: 'array',
                  description:
                    'Things the person filming can do better; raised when at least 20% of the frames (or the one photo) are concerned. ' +
                    'no_plant is raised for frames of flat, synthetic colour with no crop in them (a test pattern such as colour bars, a screen, a bare wall): no fruit is counted in such a frame. ' +
                    "colours_unconverted is raised for any frame of an HDR (PQ, HLG) or BT.2020 clip that the box could not convert to sRGB (its ffmpeg lacks the zscale filter), for any frame of a Dolby Vision clip without a standard base layer (profile 5: its colours exist only after Dolby's reshaping, which the box does not apply), and for a photo whose embedded colour profile it cannot apply (not a matrix/TRC RGB profile, or broken): ripeness is then uncertain. " +
                    'clip_cut_short is raised when a clip is longer than the stretch scoring reads (max_frames × sample_seconds, clips[].read_s): the counts then cover only the start of it; its frames are the last frame scored of each such clip. ' +
                    "clip_damaged is raised when ffmpeg reported decoding errors in a clip or photo it still decoded in part: a clip cut off part way (its index intact), so the counts cover only the start the message names, or pictures damaged in the middle, skipped or garbled; the message gives ffmpeg's words, and its frames are the last frame scored of each such clip. A file with no decodable frame fails the walk instead. " +
                    "Photos in Display P3 (an iPhone's default), Adobe RGB or another RGB profile, and HEIF (nclx) or PNG (cICP) photos tagged with BT.709, BT.2020 or P3 primaries, are converted to sRGB before detection.",
                  items: {
                    type: 'object',
                    required: ['code', 'message', 'frames'],
                    additionalProperties: false,
                    properties: {
                      code: {
                        enum: [
                          'no_plant',
                          'too_dark',
                          'overexposed',
                          'out_of_focus',
                          'walked_too_fast',
                          'colours_unconverted',
                          'clip_cut_short',
                          'clip_damaged',
                        ],
                      },
                      message: { type: 'string' },
                      frames: { type: 'array', items: { type: 'integer' }, description: 'Frames concerned.' },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
    media: {
      type: 'object',
      required: ['clips', 'frames'],
      additionalProperties: false,
      description:
        "How long the walk's files stay on the box. The uploaded clips are kept WALK_CLIP_KEEP_DAYS after the walk is scored (default 30; they are needed only to score it again), " +
        'the frames and overlays WALK_FRAME_KEEP_DAYS (default 0: for ever); 0 keeps either for ever. Past that, an hourly sweep removes them; counts, result and the clip list stay. ' +
        "When free space under DATA_DIR falls below DISK_RESERVE (default 2 GiB), the oldest scored walks' clips go early, then, once no scored walk has clips left, their frames. " +
        'Afterwards a frame answers 410 frames_removed, and POST …/rescore 409 clips_removed.',
      properties: {
        clips: mediaPartSchema('The uploaded clips or photos.'),
        frames: mediaPartSchema('The frames and overlays (result.frames[].image_url, overlay_url).'),
      },
    },
    created_at: instantSchema,
    started_at: { type: ['string', 'null'], format: 'date-time', description: 'When scoring (last) started; null while queued.' },
    finished_at: { type: ['string', 'null'], format: 'date-time', description: 'When it ended, done or failed.' },
    updated_at: instantSchema,
    version: { type: 'string', description: 'Hybrid-logical-clock stamp; grows with every state change (not with progress ticks).' },
  },
};

/**
 * A scored walk's result as it is stored (walks.result): what GET /api/observations/{id} presents
 * as `result`, less the frame URLs the presenter adds, plus the clips it keeps. A walk received
 * by sync is checked against it (src/sync/kinds/walks.ts): a result the API could not present is
 * refused there rather than stored.
 */
export const storedResultSchema: JsonSchema = (() => {
  const presented = structuredClone(
    (walkSchema.properties as Record<string, { oneOf: JsonSchema[] }>).result!.oneOf.find((s) => s.type === 'object')!,
  ) as JsonSchema & { properties: Record<string, JsonSchema> };
  const frame = presented.properties.frames!.items as { required: string[]; properties: Record<string, JsonSchema> };
  frame.required = frame.required.filter((n) => n !== 'image_url' && n !== 'overlay_url');
  delete frame.properties.image_url;
  delete frame.properties.overlay_url;
  presented.properties.clips = {
    type: 'array',
    items: {
      type: 'object',
      required: ['position', 'frames'],
      additionalProperties: false,
      properties: { position: { type: 'integer', minimum: 0 }, frames: { type: 'integer', minimum: 0 } },
    },
  };
  return presented;
})();

/** A walk in a list: everything but the result (fetch the walk for frames and fruit). */
export function presentWalkSummary(walk: WalkTable, clipCount: number, zone = 'UTC') {
  return {
    job_id: walk.id,
    status: walk.status,
    progress: progressOf(walk),
    error: walk.status === 'failed' ? walk.error : null,
    source: walk.source,
    cycle_id: walk.cycle_id,
    week: walk.week,
    clips: clipCount,
    detector: walk.detector,
    counts: modelCounts(walk),
    corrected_counts: correctedCounts(walk),
    created_at: at(walk.created_at, zone)!,
    finished_at: at(walk.finished_at, zone),
  };
}

export const walkSummarySchema: JsonSchema = {
  type: 'object',
  required: [
    'job_id',
    'status',
    'progress',
    'error',
    'source',
    'cycle_id',
    'week',
    'clips',
    'detector',
    'counts',
    'corrected_counts',
    'created_at',
    'finished_at',
  ],
  additionalProperties: false,
  properties: {
    job_id: { type: 'string' },
    status: statusSchema,
    progress: num('0 to 1.'),
    error: { type: ['string', 'null'] },
    source: { type: 'string' },
    cycle_id: { type: ['string', 'null'] },
    week: { type: ['string', 'null'], description: 'ISO week label.' },
    clips: { type: 'integer', description: 'Clips (or photos) in the walk.' },
    detector: { type: ['string', 'null'] },
    counts: {
      oneOf: [countsSchema, { type: 'null' }],
      description: 'The model counts: fruit by ripeness as the detector counted them, once done.',
    },
    corrected_counts: correctedCountsSchema,
    created_at: instantSchema,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
