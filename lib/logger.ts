import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

export type LogFormat = 'auto' | 'pretty' | 'json';

/** `auto`: short coloured lines in a terminal, JSON (one object per line) anywhere else. */
function prettyStream(format: LogFormat) {
  if (format === 'json' || (format === 'auto' && !process.stdout.isTTY)) return undefined;
  return pretty({
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,method,path,status,ms',
    // `api GET /v1/videos 200 12ms` instead of a request object.
    messageFormat: (log, key) => (log.method && log.status ? `${log.method} ${log.path} ${log.status} ${log.ms}ms` : String(log[key] ?? '')),
    sync: true,
  });
}

/** `output`: a format (`LOG_FORMAT`), or a destination stream that lets tests capture the lines. */
export function createLogger(level = 'info', name = 'vidhost', output: LogFormat | pino.DestinationStream = 'json'): Logger {
  const options = { name, level, base: { pid: process.pid } };
  const stream = typeof output === 'string' ? prettyStream(output) : output;
  return stream ? pino(options, stream) : pino(options);
}
