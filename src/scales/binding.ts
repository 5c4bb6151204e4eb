import { read } from 'node:fs';
import { promisify } from 'node:util';
import { autoDetect, LinuxBinding, DarwinBinding, type AutoDetectTypes } from '@serialport/bindings-cpp';
// The library's own read loop, with its seam for the read call; the package has no exports map.
import { unixRead } from '@serialport/bindings-cpp/dist/unix-read.js';

const readAsync = promisify(read);

/**
 * A read of a tty that has hung up (a USB adapter pulled, a pty whose other end closed) returns 0
 * bytes. The stock loop reads again at once, so a hang-up that comes while no read is waiting on
 * the poller is never seen: the read spins and the port looks connected forever. On a tty opened
 * non-blocking with VMIN=1, "no data yet" is EAGAIN, never 0, so 0 is the hang-up.
 */
async function readOrHangup(...args: Parameters<typeof readAsync>): ReturnType<typeof readAsync> {
  const got = await readAsync(...args);
  if (got.bytesRead === 0) {
    throw Object.assign(new Error('the serial line hung up'), { code: 'EIO', disconnect: true });
  }
  return got;
}

/**
 * The platform's serialport binding, but a hung-up line ends the read with a disconnect error
 * (which the stream turns into its close event) instead of reading 0 bytes forever. Windows reads
 * through its own overlapped I/O and is left as it is.
 */
export function hangupAwareBinding(): AutoDetectTypes {
  const base = autoDetect();
  if (base !== LinuxBinding && base !== DarwinBinding) return base;
  const unix = base as typeof LinuxBinding;
  return {
    list: () => unix.list(),
    async open(options) {
      const port = await unix.open(options);
      port.read = async (buffer: Buffer, offset: number, length: number) => {
        if (!port.isOpen) throw new Error('Port is not open');
        return unixRead({ binding: port, buffer, offset, length, fsReadAsync: readOrHangup });
      };
      return port;
    },
  } satisfies typeof LinuxBinding;
}
