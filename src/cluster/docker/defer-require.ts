import Module, { createRequire } from 'node:module';
import path from 'node:path';

const localRequire = createRequire(import.meta.url);

/**
 * The two modules dockerode loads at require time for features rmq-bench does not use:
 * BuildKit's session (dockerode's lib/session.js, which loads @grpc/grpc-js and
 * @grpc/proto-loader; only a buildImage with version 2 calls it) and docker-modem's ssh://
 * transport (lib/ssh.js, which loads ssh2; only an ssh:// DOCKER_HOST calls it). Each exports
 * one function.
 */
export function dockerodeExtras(require: NodeJS.Require = localRequire): string[] {
  const dockerode = require.resolve('dockerode');
  const modem = createRequire(dockerode).resolve('docker-modem');
  return [path.join(path.dirname(dockerode), 'session.js'), path.join(path.dirname(modem), 'ssh.js')];
}

/**
 * Put a stand-in for a CommonJS module whose export is one function into require.cache (which
 * Node documents as writable): whoever requires it gets a function that loads the real module on
 * its first call and hands every call to it. Nothing happens when the module is already loaded.
 */
export function deferFunctionModule(file: string, require: NodeJS.Require = localRequire): void {
  if (require.cache[file] !== undefined) return;
  let real: ((...args: unknown[]) => unknown) | undefined;
  const load = (): ((...args: unknown[]) => unknown) => {
    delete require.cache[file];
    return require(file) as (...args: unknown[]) => unknown;
  };
  const standIn = function (this: unknown, ...args: unknown[]): unknown {
    real ??= load();
    return real.apply(this, args);
  };
  const m = new Module(file);
  m.filename = file;
  m.loaded = true;
  m.exports = standIn;
  require.cache[file] = m;
}

/**
 * Call before dockerode is first imported: its BuildKit and ssh modules become stand-ins
 * (deferFunctionModule), so that importing dockerode does not load gRPC, the proto loader and
 * ssh2, most of what the import costs, in every process that talks to Docker. An ssh://
 * DOCKER_HOST or a BuildKit build still works: its first call loads the real module.
 */
export function deferDockerodeExtras(): void {
  for (const file of dockerodeExtras()) deferFunctionModule(file);
}
