/** Upstream's generated-name suffix: five characters from an alphabet without vowels or look-alikes. */
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
export const GENERATED_SUFFIX_LENGTH = 5;

export function randomNameSuffix(): string {
  let s = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) s += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return s;
}
