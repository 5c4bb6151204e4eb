// The scripts' command lines: a bad or unknown option exits 2 saying which, with the usage;
// --help prints the usage and exits 0.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export function parseCli<T extends ParseArgsConfig & { options: { help: { type: 'boolean' } } }>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>>['values'] {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (err) {
    console.error(`${(err as Error).message}\n${usage}`);
    process.exit(2);
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return parsed.values;
}
