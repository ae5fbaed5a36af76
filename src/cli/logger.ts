/** Structured JSON logs, one object per line on stdout (never a token, password or value). */
import pino, { type Logger } from 'pino';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'cfghub' }, timestamp: pino.stdTimeFunctions.isoTime });
}
