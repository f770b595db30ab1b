/** Replace the password in a URL (amqp, amqps, http...) with '***'. Leaves anything unparsable alone but masks user:pass@ patterns. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') {
      u.password = '***';
      // URL re-serialises; keep the original scheme casing and trailing form.
      return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
    }
    return url;
  } catch {
    return url.replace(/\/\/([^:/@\s]+):([^@\s]*)@/, '//$1:***@');
  }
}

/** Mask every URL inside a free text (error messages quote URLs). */
export function maskUrlsIn(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^:/@\s]+):([^@\s]*)@/gi, '$1$2:***@');
}
