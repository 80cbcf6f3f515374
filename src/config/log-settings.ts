/**
 * The log settings a configuration names (LOG_FORMAT, LOG_LEVEL), apart from the logger that writes the lines: the
 * library reads configuration too, and must not load the worker's SDK to do so.
 */
import type { LogLevel } from '@temporalio/common';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const satisfies readonly LogLevel[];
