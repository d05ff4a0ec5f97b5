// English number words for the aligner: "42" is heard as "forty two", which the dictionary has.
const ONES = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: Array<[number, string]> = [
  [1e9, 'billion'],
  [1e6, 'million'],
  [1e3, 'thousand'],
];

function under1000(n: number): string[] {
  const out: string[] = [];
  if (n >= 100) {
    out.push(ONES[Math.floor(n / 100)], 'hundred');
    n %= 100;
  }
  if (n >= 20) {
    out.push(TENS[Math.floor(n / 10)]);
    if (n % 10) out.push(ONES[n % 10]);
  } else if (n > 0) out.push(ONES[n]);
  return out;
}

/**
 * The words of a whole number as read aloud: 1999 → "nineteen ninety nine" (years are read in
 * pairs, as speakers do), 2024 → "two thousand twenty four", 3500 → "three thousand five hundred".
 * Numbers past 999 billion are read digit by digit.
 */
export function numberWords(n: number): string[] {
  if (!Number.isSafeInteger(n) || n < 0) return [];
  if (n === 0) return ['zero'];
  if (n >= 1e12) return String(n).split('').map((d) => ONES[Number(d)]);
  if (n >= 1100 && n < 2000 && n % 100 !== 0) return [...under1000(Math.floor(n / 100)), ...under1000(n % 100)];
  const out: string[] = [];
  for (const [scale, name] of SCALES) {
    if (n >= scale) {
      out.push(...under1000(Math.floor(n / scale)), name);
      n %= scale;
    }
  }
  out.push(...under1000(n));
  return out;
}
