/**
 * user:password@ in a URL, for any scheme. The password may itself contain '@': it runs to the
 * last '@' before the host part (no further '@' before the next '/', '?', '#' or space).
 */
const CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)([^:/@\s]*):(\S*?)@(?=[^@\s/?#]*(?:[/?#\s]|$))/gi;

/** Mask the password of every URL inside a free text (error messages quote URLs). */
export function maskUrlsIn(text: string): string {
  return text.replace(CREDENTIALS, '$1$2:***@');
}

/** Replace the password in a URL with '***', leaving the rest exactly as written. */
export function maskUrl(url: string): string {
  return maskUrlsIn(url);
}
