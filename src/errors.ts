/**
 * Typed errors. Each carries the process exit code it maps to; only src/cli/main.ts turns
 * them into an exit code. Messages are one line: what, where, and how long.
 */

export const ExitCode = {
  ok: 0,
  /** The verdict failed: loss detected, a demo's expectation missed. */
  verdict: 1,
  /** A group command given alone (`rmq-bench cluster`): its help on stderr, then 1, as git does. */
  noSubcommand: 1,
  /** Bad flags or arguments. */
  usage: 2,
  /** An input file is malformed (definitions.json, a report). */
  dataError: 65,
  /** A named thing does not exist (an unknown queue, node or report file). */
  notFound: 66,
  /** The cluster or broker is not reachable (not up, all nodes down). */
  brokerUnavailable: 68,
  /** The environment is missing something: no Docker engine, no compose tool, no image. */
  unavailable: 69,
  /** A bug, or a feature that has not landed yet. */
  internal: 70,
  /** A resource is taken: a port another process holds. */
  resourceTaken: 73,
  /** An output file (--html, --ledger, --csv) could not be written at the end; the result was printed first. */
  outputFailed: 74,
  /** A wait passed its deadline. */
  timeout: 75,
  /** Ctrl+C. */
  interrupted: 130,
  /** stdout or stderr closed by its reader (`rmq-bench --help | head -1`): what a shell reports for SIGPIPE, 128 + 13. */
  closedPipe: 141,
  /** SIGTERM (a CI job's timeout, `kill`): the same clean-up as Ctrl+C, the shell's 128 + 15. */
  terminated: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * A command that ends without an error ends with its verdict: passed (or no verdict) is 0, a
 * failed verdict is ExitCode.verdict. The one mapping for verdicts, as exitCode is for errors;
 * only src/cli/main.ts applies either.
 */
export function verdictExit(ok: boolean): ExitCodeValue {
  return ok ? ExitCode.ok : ExitCode.verdict;
}

export class RmqBenchError extends Error {
  readonly exitCode: ExitCodeValue;
  /** A second line for people: what to do about it. */
  readonly hint: string | undefined;

  constructor(message: string, exitCode: ExitCodeValue, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.hint = options?.hint;
  }
}

export class UsageError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.usage, options);
  }
}

export class DataError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.dataError, options);
  }
}

export class NotFoundError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.notFound, options);
  }
}

/** No Docker engine, no compose tool, no image: the machine lacks something. */
export class EnvironmentError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.unavailable, options);
  }
}

/** The cluster is not up, or no node answers. */
export class BrokerUnavailableError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.brokerUnavailable, options);
  }
}

/**
 * No broker at any URL of the first connection (exit 68, as BrokerUnavailableError). Its own class
 * so that a loop that reconnects after a lost connection passes it on instead of giving up.
 */
export class NoBrokerError extends BrokerUnavailableError {}

export class PortTakenError extends RmqBenchError {
  readonly port: number;
  constructor(port: number, purpose: string, options?: { hint?: string; cause?: unknown }) {
    super(`port ${port} on 127.0.0.1 is taken by another process (needed for ${purpose})`, ExitCode.resourceTaken, {
      hint: options?.hint ?? `free the port (e.g. 'ss -ltnp sport = :${port}' shows who holds it) or stop the other broker`,
      cause: options?.cause,
    });
    this.port = port;
  }
}

/**
 * An output file could not be written when the run ended (the disk filled, the folder went away
 * after the parse-time check): the result has been printed first (stdout JSON, stderr summary).
 */
export class OutputError extends RmqBenchError {
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.outputFailed, options);
  }
}

export class DeadlineError extends RmqBenchError {
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.timeout, options);
    this.timeoutMs = timeoutMs;
  }
}

export class InterruptedError extends RmqBenchError {
  constructor(message = 'interrupted') {
    super(message, ExitCode.interrupted);
  }
}

/** An AMQP error as the broker sent it: keeps its reply code and class id. */
export class AmqpError extends RmqBenchError {
  readonly code: number | undefined;
  readonly classId: number | undefined;
  constructor(message: string, code: number | undefined, classId: number | undefined, options?: { hint?: string; cause?: unknown }) {
    super(message, ExitCode.brokerUnavailable, options);
    this.code = code;
    this.classId = classId;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] ?? err.message;
  return String(err);
}
