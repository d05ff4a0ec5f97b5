// Pure: the command line that runs ffmpeg/ffprobe in a bubblewrap sandbox under rlimits (SPEC §12).
// A second wall behind the input allow-lists: even a demuxer bug or a missed format cannot read
// another tenant's files or reach the network, and one job cannot exhaust the machine.

export type SandboxMode = 'bwrap' | 'none';

export type RLimits = {
  /** CPU seconds for the whole process (all threads); SIGKILL beyond. */
  cpuSeconds: number;
  /** Virtual address space, bytes (allocations beyond fail with ENOMEM). */
  addressSpaceBytes: number;
  /** Largest file the process may write, bytes (writes beyond fail with EFBIG). */
  fileSizeBytes: number;
};

export type SandboxSpec = {
  mode: SandboxMode;
  /** The tool, as an absolute path (bwrap execs it inside the sandbox). */
  tool: string;
  /** The one input: a local file (bound read-only) or an http(s) URL (network allowed). */
  input: string;
  /** The only writable directory, if the job writes files. */
  outputDir?: string;
  limits: RLimits;
  /** Further local files the job reads (a watermark's image, SPEC §24): bound read-only like the input, after the private /tmp. */
  inputs?: readonly string[];
  /** Extra read-only paths the tool needs (e.g. its own directory when it is not under /usr). */
  readOnly?: readonly string[];
  /** false where prlimit(1) is missing (not Linux): the rlimits are skipped, the wall-time bound stays. */
  prlimit?: boolean;
};

const isUrl = (s: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

// What a dynamically linked Debian ffmpeg needs: /usr (merged /bin, /lib), the loader cache,
// and /etc/alternatives (libblas/liblapack are alternatives symlinks).
const SYSTEM = [
  '--ro-bind', '/usr', '/usr',
  '--symlink', 'usr/bin', '/bin',
  '--symlink', 'usr/sbin', '/sbin',
  '--symlink', 'usr/lib', '/lib',
  '--symlink', 'usr/lib64', '/lib64',
  '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache',
  '--ro-bind-try', '/etc/alternatives', '/etc/alternatives',
];

// Only for an S3 URL input: name resolution and TLS trust.
const NETWORK_ETC = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/ssl', '/etc/ca-certificates'];

/** prlimit(1) sets hard = soft, so the kernel SIGKILLs at the CPU limit rather than sending SIGXCPU (which ffmpeg traps). */
export function prlimitArgs(limits: RLimits): string[] {
  const n = (v: number) => String(Math.max(1, Math.floor(v)));
  return [
    `--cpu=${n(limits.cpuSeconds)}:${n(limits.cpuSeconds)}`,
    `--as=${n(limits.addressSpaceBytes)}:${n(limits.addressSpaceBytes)}`,
    `--fsize=${n(limits.fileSizeBytes)}:${n(limits.fileSizeBytes)}`,
  ];
}

/**
 * `bwrap` arguments: new namespaces for everything (network only kept for a URL input), an
 * empty root with read-only system directories, a private /tmp, /proc and /dev, the input
 * read-only at its own path, the output dir writable, no capabilities, uid/gid nobody, a clean
 * environment, and death with the parent.
 */
export function bwrapArgs(spec: Omit<SandboxSpec, 'mode' | 'limits'>): string[] {
  const remote = isUrl(spec.input);
  const args = [
    '--unshare-all',
    ...(remote ? ['--share-net'] : []),
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--uid', '65534',
    '--gid', '65534',
    ...SYSTEM,
    ...(spec.readOnly ?? []).flatMap((p) => ['--ro-bind', p, p]),
    ...(remote ? NETWORK_ETC.flatMap((p) => ['--ro-bind-try', p, p]) : []),
    '--proc', '/proc',
    '--dev', '/dev',
    '--tmpfs', '/tmp',
    ...(remote ? [] : ['--ro-bind', spec.input, spec.input]),
    ...(spec.inputs ?? []).flatMap((p) => ['--ro-bind', p, p]),
    ...(spec.outputDir ? ['--bind', spec.outputDir, spec.outputDir] : []),
    '--chdir', spec.outputDir ?? '/',
    '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin',
    '--setenv', 'LC_ALL', 'C',
    '--',
  ];
  return args;
}

/** The command that runs `tool args` as the spec says: prlimit always, bwrap when the mode is bwrap. */
export function sandboxedCommand(spec: SandboxSpec, args: readonly string[], paths: { prlimit?: string; bwrap?: string } = {}): { command: string; args: string[] } {
  const prlimit = paths.prlimit ?? 'prlimit';
  const inner = spec.mode === 'bwrap' ? [paths.bwrap ?? 'bwrap', ...bwrapArgs(spec), spec.tool] : [spec.tool];
  if (spec.prlimit === false) return { command: inner[0], args: [...inner.slice(1), ...args] };
  return { command: prlimit, args: [...prlimitArgs(spec.limits), '--', ...inner, ...args] };
}
