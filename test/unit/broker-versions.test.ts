import { describe, expect, it } from 'vitest';
import {
  BROKER_FEATURES,
  type BrokerFeature,
  featureProblem,
  featureRange,
  hasFeature,
  LINE_SPECS,
  lineOf,
  lineProblem,
  RABBITMQ_LINES,
  requireFeature,
  versionAtLeast,
} from '../../src/broker-versions.js';
import { EnvironmentError } from '../../src/errors.js';

describe('versionAtLeast', () => {
  it.each([
    ['4.3.6', '4.3', true],
    ['4.3.0', '4.3', true],
    ['4.2.9', '4.3', false],
    ['4.0.5', '4.0', true],
    ['3.10.8', '4.0', false],
    ['3.10.8', '3.9', true],
    ['3.11.15', '3.11.15', true],
    ['3.11.14', '3.11.15', false],
    ['4.0.5+1', '4.0.5', true],
    ['10.0.0', '4.3', true],
    ['not a version', '4.0', false],
    ['', '0.0', false],
  ])('%s >= %s: %s', (version, min, expected) => {
    expect(versionAtLeast(version, min)).toBe(expected);
  });
});

describe('lineOf and lineProblem', () => {
  it.each([
    ['3.10.8', '3.10'],
    ['4.0.5', '4.0'],
    ['4.3.6', '4.3'],
    ['4.1.2', undefined],
    ['3.13.7', undefined],
    ['garbage', undefined],
  ])('%s is of line %s', (version, line) => {
    expect(lineOf(version)).toBe(line);
  });

  it('every line has a Debian suite and both image names, and the lines are distinct', () => {
    for (const l of RABBITMQ_LINES) {
      expect(LINE_SPECS[l].debianSuite).toMatch(/^[a-z]+$/);
      expect(LINE_SPECS[l].officialImage).toBe(`rabbitmq:${l}-management`);
      expect(LINE_SPECS[l].builtImage).toBe(`rmq-bench/rabbitmq:${l}`);
    }
    expect(new Set(RABBITMQ_LINES.map((l) => LINE_SPECS[l].debianSuite)).size).toBe(RABBITMQ_LINES.length);
  });

  it.each([
    ['3.10', undefined],
    ['4.3', undefined],
    ['4.1', 'is not a RabbitMQ version rmq-bench runs (3.10, 4.0, 4.3)'],
    ['3.10.8', 'is not a RabbitMQ version rmq-bench runs (3.10, 4.0, 4.3)'],
  ])('lineProblem(%s)', (value, problem) => {
    expect(lineProblem(value)).toBe(problem);
  });
});

describe('the version-gated features, on each line', () => {
  // What each line rmq-bench runs has, as the release notes say: the table the refusals follow.
  const expected: Record<BrokerFeature, Record<string, boolean>> = {
    amqp10: { '3.10.8': false, '4.0.5': true, '4.3.6': true },
    'delayed-retry': { '3.10.8': false, '4.0.5': false, '4.3.6': true },
    'consumer-timeout-policy': { '3.10.8': false, '4.0.5': true, '4.3.6': true },
    'consumer-timeout-cancel': { '3.10.8': false, '4.0.5': false, '4.3.6': true },
    'delivery-limit-default': { '3.10.8': false, '4.0.5': true, '4.3.6': true },
    'uncounted-returns': { '3.10.8': false, '4.0.5': false, '4.3.6': true },
    'mirrored-queues': { '3.10.8': true, '4.0.5': false, '4.3.6': false },
    'partition-handling': { '3.10.8': true, '4.0.5': true, '4.3.6': false },
    'required-feature-flags': { '3.10.8': false, '4.0.5': true, '4.3.6': true },
  };
  it('covers every feature', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(BROKER_FEATURES).sort());
  });
  it.each(Object.entries(expected).flatMap(([f, byVersion]) => Object.entries(byVersion).map(([v, has]) => ({ f: f as BrokerFeature, v, has }))))(
    '$f on $v: $has',
    ({ f, v, has }) => {
      expect(hasFeature(v, f)).toBe(has);
      expect(featureProblem(v, f) === undefined).toBe(has);
    },
  );

  it('the refusal names what was asked, the versions that have it and the broker’s, and a way to such a cluster', () => {
    expect(featureRange('delayed-retry')).toBe('4.3 or later');
    expect(featureRange('mirrored-queues')).toBe('before 4.0');
    expect(featureProblem('4.3.6', 'mirrored-queues', '--queue-type mirrored')).toBe('--queue-type mirrored needs RabbitMQ before 4.0; this broker runs 4.3.6');
    let caught: unknown;
    try {
      requireFeature('4.0.5', 'delayed-retry', 'delayed-retry-demo');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvironmentError);
    expect((caught as EnvironmentError).message).toBe('delayed-retry-demo needs RabbitMQ 4.3 or later; this broker runs 4.0.5');
    expect((caught as EnvironmentError).exitCode).toBe(69);
    expect((caught as EnvironmentError).hint).toBe(
      'see the RabbitMQ 4.3.0 release notes; a 4.3 cluster beside this one: rmq-bench cluster up --rabbitmq 4.3 --name <name> --amqp-port <port>',
    );
    expect(featureProblem('4.3', 'partition-handling', '--partition-handling', 'the cluster is RabbitMQ')).toBe(
      '--partition-handling needs RabbitMQ before 4.3; the cluster is RabbitMQ 4.3',
    );
    expect(() => requireFeature('3.10.8', 'mirrored-queues')).not.toThrow();
  });
});
