/** Provisioning output: `==> what happens` and `warning: …` on stderr, like the bash it replaced. */

export class ProvisionError extends Error {}

export const say = (msg: string): void => void process.stderr.write(`==> ${msg}\n`);
export const warn = (msg: string): void => void process.stderr.write(`warning: ${msg}\n`);

/** Stops provisioning with a message the entry point prints as `error: …`. */
export function die(msg: string): never {
  throw new ProvisionError(msg);
}
