// Helper process for supervisor.test.ts: a Supervisor with two real children that stops on a signal.
import { spawnChild } from '../../../ops/proc';
import { Supervisor } from '../../../ops/supervisor';

const sup = new Supervisor({ log: { say() {}, warn() {} } });
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => void sup.stop().then(() => console.log(`stopped after ${sig}`)));
}
void (async () => {
  const pids: number[] = [];
  for (const name of ['a', 'b']) {
    await sup.add({ name, start: async () => {
      const c = spawnChild('bash', ['-c', 'sleep 60 & wait']);
      pids.push(c.pid);
      return c;
    } });
  }
  console.log(`children ${pids.join(' ')}`);
  await sup.done;
})();
