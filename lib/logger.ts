import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level = 'info', name = 'vidhost'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}
