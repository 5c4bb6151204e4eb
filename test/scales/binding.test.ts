import t from 'tap';
import { hangupAwareBinding } from '../../src/scales/binding.js';
import { hasSocat, ptyPairFor } from '../helpers/pty.js';

/**
 * The binding over a real pty pair: a line that hangs up while no read is waiting on the poller
 * (the order the stock read loop never notices: it reads 0 bytes forever) ends the next read
 * with a disconnect error.
 */

/** The read's outcome, or 'still reading' once the deadline passes (the stock loop never settles). */
async function settle(read: Promise<{ bytesRead: number; buffer: Buffer }>, ms = 5000) {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'still reading'>((r) => (timer = setTimeout(() => r('still reading'), ms)));
  try {
    return await Promise.race([
      read.then(
        (v) => ({ ok: v }),
        (err: unknown) => ({ err }),
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

if (process.platform === 'win32') {
  t.plan(0, 'the hang-up read is a unix tty behaviour');
} else if (!hasSocat()) {
  t.plan(0, 'socat is not installed (apt-get install socat): the binding test needs a real pty pair');
} else {
  t.test('a hang-up before the read ends that read with a disconnect', async (t) => {
    const pty = await ptyPairFor(t);
    const port = await hangupAwareBinding().open({ path: pty.device, baudRate: 9600, hupcl: false });
    t.teardown(async () => {
      if (port.isOpen) await port.close();
    });

    pty.send('ST,GS,+0001.00kg\r\n');
    const first = await settle(port.read(Buffer.alloc(64), 0, 64));
    t.match(first, { ok: { bytesRead: Number } }, 'bytes on a live line are read');

    // No read is pending: the hang-up is only there for the next read to find.
    await pty.pull();
    const after = await settle(port.read(Buffer.alloc(64), 0, 64));
    t.not(after, 'still reading', 'the read after the hang-up settles');
    t.match(after, { err: { disconnect: true, message: /hung up/ } }, 'as a disconnect, which closes the stream');
  });
}
