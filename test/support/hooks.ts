import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { createTestDatabase, startS3Server, startTemporal, type S3Server, type TestDatabase } from './services';

// Worker state changes at INFO drown the test report.
// The replay test provokes non-determinism on purpose; core would print it as a WARN.
const temporalLevel = (process.env.TEST_TEMPORAL_LOG_LEVEL as 'WARN') ?? 'ERROR';
Runtime.install({
  logger: new DefaultLogger(temporalLevel),
  telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: temporalLevel }), forward: {} } },
});

/** Lazily started shared services; `afterAll` stops whatever was started. */
const started: { temporal?: Promise<TestWorkflowEnvironment>; db?: Promise<TestDatabase>; s3?: Promise<S3Server> } = {};
const cleanups: Array<() => Promise<unknown>> = [];

export function temporalEnv(): Promise<TestWorkflowEnvironment> {
  started.temporal ??= startTemporal().then((env) => {
    cleanups.push(() => env.teardown());
    return env;
  });
  return started.temporal;
}

export function testDatabase(): Promise<TestDatabase> {
  started.db ??= createTestDatabase().then((t) => {
    cleanups.push(() => t.drop());
    return t;
  });
  return started.db;
}

export function s3Server(): Promise<S3Server> {
  started.s3 ??= startS3Server().then((s) => {
    cleanups.push(() => s.stop());
    return s;
  });
  return started.s3;
}

/** Registered by tests that open stacks, so they close before the services under them. */
export function onTeardown(fn: () => Promise<unknown>): void {
  cleanups.push(fn);
}

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    for (const fn of cleanups.reverse()) {
      await fn().catch((err) => console.error('teardown:', err));
    }
  },
};
