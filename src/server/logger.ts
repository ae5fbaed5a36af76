/**
 * Structured logs on stdout (never a token, password or value): JSON, one object per line (the
 * default, for log collectors), or `pretty` for a person at a terminal (pino-pretty, colored
 * when stdout is a terminal). The level comes from LOG_LEVEL (fatal, error, warn, info, debug,
 * trace, silent; default info).
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type LogFormat = 'json' | 'pretty';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info', format: LogFormat = 'json'): Logger {
  const options = { level, base: { service: 'cfghub' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === 'pretty') {
    return pino(
      options,
      pretty({
        colorize: Boolean(process.stdout.isTTY),
        translateTime: 'SYS:standard',
        ignore: 'pid,hostname,service',
        sync: true,
      }),
    );
  }
  return pino(options);
}
