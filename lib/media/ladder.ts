// Pure: imported by Temporal workflow code, so no Node built-ins and no I/O here.

export type Rung = {
  name: string;
  width: number;
  height: number;
  /** Target average video bitrate, bits/s. */
  videoBitrate: number;
  /** Peak video bitrate, bits/s. */
  maxrate: number;
  /** VBV buffer size, bits. */
  bufsize: number;
  audioBitrate: number;
};

export type SourceDimensions = { width: number; height: number; rotation?: number };

export const AUDIO_BITRATE = 128_000;

// Capped VBR: a peak 7% over the target keeps segments close to the advertised HLS BANDWIDTH,
// and 1.5 s worth of buffer lets x264 absorb scene changes without bitrate spikes.
const MAXRATE_FACTOR = 1.07;
const BUFSIZE_FACTOR = 1.5;

function rung(shortSide: number, longSide: number, videoBitrate: number): Rung {
  return {
    name: `${shortSide}p`,
    width: longSide,
    height: shortSide,
    videoBitrate,
    maxrate: Math.round(videoBitrate * MAXRATE_FACTOR),
    bufsize: Math.round(videoBitrate * BUFSIZE_FACTOR),
    audioBitrate: AUDIO_BITRATE,
  };
}

/** The full 16:9 landscape ladder, lowest first. "Np" names the short side. */
export const LADDER: readonly Rung[] = Object.freeze([
  rung(240, 426, 400_000),
  rung(360, 640, 800_000),
  rung(480, 854, 1_400_000),
  rung(720, 1280, 2_800_000),
  rung(1080, 1920, 5_000_000),
  rung(1440, 2560, 8_000_000),
  rung(2160, 3840, 14_000_000),
]);

const roundEven = (n: number): number => Math.max(2, Math.round(n / 2) * 2);
const floorEven = (n: number): number => Math.max(2, Math.floor(n / 2) * 2);

/** Display dimensions after applying container rotation (90/270 swap width and height). */
export function displayDimensions(source: SourceDimensions): { width: number; height: number } {
  const { width, height } = source;
  if (!Number.isFinite(width) || !Number.isFinite(height) || width <= 0 || height <= 0) {
    throw new RangeError(`invalid source dimensions ${width}x${height}`);
  }
  const quarterTurns = Math.round((source.rotation ?? 0) / 90);
  const swap = Math.abs(quarterTurns) % 2 === 1;
  return swap ? { width: height, height: width } : { width, height };
}

/**
 * Renditions to produce for a source, lowest first. Rungs are chosen by the source's short side
 * (so portrait 720x1280 gets "720p" = 720x1280) and never upscale. Dimensions keep the source's
 * aspect ratio and are even, as x264 with yuv420p requires.
 */
export function planLadder(source: SourceDimensions): Rung[] {
  const { width, height } = displayDimensions(source);
  const portrait = height > width;
  const srcShort = Math.min(width, height);
  const srcLong = Math.max(width, height);
  const maxShort = floorEven(srcShort);
  const maxLong = floorEven(srcLong);

  const sized = (template: Rung, shortSide: number): Rung => {
    const short = Math.min(shortSide, maxShort);
    // Capped at the source so e.g. 853x480 yields 852x480 rather than a 1px upscale to 854.
    const long = Math.min(roundEven((short * srcLong) / srcShort), maxLong);
    return {
      ...template,
      name: `${short}p`,
      width: portrait ? short : long,
      height: portrait ? long : short,
    };
  };

  const fitting = LADDER.filter((r) => r.height <= srcShort);
  if (fitting.length === 0) {
    // Tiny source: one rendition at its own size, with the lowest rung's bitrates.
    return [sized(LADDER[0], maxShort)];
  }
  return fitting.map((r) => sized(r, r.height));
}

/**
 * Whether the master still lists the passthrough: only while no encoded rung at least as tall
 * (short side) is ready. A source taller than the ladder's top rung (e.g. 1000p, whose top rung
 * is 720p) keeps it, as the only variant at full resolution; its bitrate was checked to be sane.
 */
export function keepPassthrough(source: { width: number; height: number }, ready: ReadonlyArray<{ width: number; height: number }>): boolean {
  const short = Math.min(source.width, source.height);
  return !ready.some((r) => Math.min(r.width, r.height) >= short);
}

/**
 * Whether the (passthrough-eligible) source can BE the ladder's top rung instead of encoding it
 * again (SPEC §21): the top rung has the source's own size (no downscale needed) and the source's
 * video bitrate is within the rung's cap. Then the remux is published under the rung's name and
 * only the rungs below are encoded.
 */
export function sourceIsTopRung(
  source: { width: number; height: number; rotation: number; videoBitrate: number | null },
  top: Pick<Rung, 'width' | 'height' | 'videoBitrate'> | undefined,
): boolean {
  if (!top || source.rotation !== 0 || source.videoBitrate === null || source.videoBitrate <= 0) return false;
  return top.width === source.width && top.height === source.height && source.videoBitrate <= top.videoBitrate;
}

/** SPEC §23 second round: the tallest rung a source the passthrough refuses offers at `ready`, encoded on request. */
export const ON_REQUEST_MAX_SHORT_SIDE = 1080;
/** The on-request rung players should start with: at least this tall when the source is. */
export const ON_REQUEST_START_SHORT_SIDE = 720;

/** The rungs offered on request at `ready` (issue 47): every planned rung up to 1080p (short side), lowest first. */
export function onRequestRungs(rungs: readonly Rung[]): Rung[] {
  const short = (r: Rung) => Math.min(r.width, r.height);
  const within = rungs.filter((r) => short(r) <= ON_REQUEST_MAX_SHORT_SIDE);
  return within.length ? within : rungs.slice(0, 1);
}

/** Which on-request rung a player starts with (listed first): the lowest at least 720p, else the tallest. */
export function onRequestStart(rungs: readonly Rung[]): Rung | undefined {
  const short = (r: Rung) => Math.min(r.width, r.height);
  return rungs.find((r) => short(r) >= ON_REQUEST_START_SHORT_SIDE) ?? rungs[rungs.length - 1];
}
