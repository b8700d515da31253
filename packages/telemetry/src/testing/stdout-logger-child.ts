// A process that logs to stdout through createLogger's default destination, for
// stdout-logging.test.ts. argv: the mode (`idle`, `exit`, `throw`, `spread`) and a line count.
// On stderr it reports how many non-empty writes reached stdout's descriptor.
import fs from 'node:fs';
import { createLogger } from '../logger.js';

const [mode = 'idle', countText = '3'] = process.argv.slice(2);
const count = Number(countText);

let writes = 0;
const countWrite = (fd: unknown, data: unknown) => {
  if (fd === process.stdout.fd && String(data).length > 0) writes += 1;
};
const write = fs.write.bind(fs);
const writeSync = fs.writeSync.bind(fs);
// sonic-boom looks fs.write and fs.writeSync up at each call: count the writes that carry
// bytes to stdout, whichever way they go.
Object.assign(fs, {
  write: (fd: number, data: unknown, ...rest: unknown[]) => {
    countWrite(fd, data);
    return (write as (...args: unknown[]) => void)(fd, data, ...rest);
  },
  writeSync: (fd: number, data: unknown, ...rest: unknown[]) => {
    countWrite(fd, data);
    return (writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  },
});
process.on('exit', () => process.stderr.write(`writes=${writes}\n`));

const logger = createLogger({ service: 'stdout-test' });
const line = (index: number) =>
  logger.info({ index, path: '/v1/auth/callback', status: 302 }, 'request completed');

if (mode === 'spread') {
  // One line about every millisecond, as requests finish under load.
  let index = 0;
  const next = () => {
    line(index);
    index += 1;
    if (index < count) setTimeout(next, 1);
    else setTimeout(() => process.exit(0), 300);
  };
  next();
} else {
  for (let index = 0; index < count; index += 1) line(index);
  if (mode === 'exit') process.exit(0);
  if (mode === 'throw') throw new Error('crash after logging');
  // idle: stay alive well past the flush interval; the parent reads the lines meanwhile.
  setTimeout(() => undefined, 3_000);
}
