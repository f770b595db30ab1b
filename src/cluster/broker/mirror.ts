import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * The Debian archive URL this host's apt uses, read from its sources (one-line .list files
 * and deb822 .sources files): the first http(s) URI ending in /debian whose components
 * include main. Security archives (…/debian-security) and vendor repositories that merely
 * end in /debian are skipped: debootstrap needs the main archive. Pure: it takes the texts.
 */
export function debianMirrorFrom(files: readonly { name: string; text: string }[]): string | undefined {
  const candidates: string[] = [];
  for (const file of files) {
    if (file.name.endsWith('.sources')) {
      for (const stanza of file.text.split(/\n\s*\n/)) {
        if (/^\s*Enabled:\s*no\s*$/im.test(stanza)) continue;
        const types = /^Types:\s*(.+)$/im.exec(stanza)?.[1]?.split(/\s+/) ?? [];
        if (!types.includes('deb')) continue;
        const uris = /^URIs:\s*(.+)$/im.exec(stanza)?.[1]?.split(/\s+/) ?? [];
        const components = /^Components:\s*(.+)$/im.exec(stanza)?.[1]?.split(/\s+/) ?? [];
        if (components.includes('main')) candidates.push(...uris);
      }
    } else {
      for (const raw of file.text.split('\n')) {
        const line = raw.replace(/#.*/, '').trim();
        const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+\s+(.+)$/.exec(line);
        if (m?.[1] && m[2]?.split(/\s+/).includes('main')) candidates.push(m[1]);
      }
    }
  }
  const isMain = (uri: string): boolean => /^https?:\/\//.test(uri) && /\/debian\/?$/.test(uri);
  const found = candidates.find(isMain);
  return found?.replace(/\/$/, '');
}

export async function hostDebianMirror(root = '/etc/apt'): Promise<string | undefined> {
  const files: { name: string; text: string }[] = [];
  const tryRead = async (p: string): Promise<void> => {
    try {
      files.push({ name: path.basename(p), text: await readFile(p, 'utf8') });
    } catch {
      /* absent */
    }
  };
  await tryRead(path.join(root, 'sources.list'));
  try {
    const dir = path.join(root, 'sources.list.d');
    for (const name of (await readdir(dir)).sort()) {
      if (name.endsWith('.list') || name.endsWith('.sources')) await tryRead(path.join(dir, name));
    }
  } catch {
    /* no directory */
  }
  return debianMirrorFrom(files);
}
