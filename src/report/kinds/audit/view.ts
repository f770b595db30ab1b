import type { AuditItem } from '../../../audit/check.js';
import type { AuditResult } from '../../../scenarios/broker-tools/audit.js';
import { type J, isObj, n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, opt, str } from '../../shape-check.js';
import { renderAudit } from './text.js';

/** `rmq-bench audit`: a live broker held against the reliability checklist. */
export const audit: KindView<AuditResult> = {
  shape: obj<AuditResult>({
    counts: opt(obj<AuditResult['counts']>({ pass: opt(num), warn: opt(num), fail: opt(num) })),
    items: opt(list('items', obj<AuditItem>({ status: opt(str), object: opt(str), message: opt(str) }))),
  }),
  text: (r) => renderAudit(r),
  charts: none,
  figures: (d) => {
    const c: J = isObj(d.counts) ? d.counts : {};
    return `pass ${n(c.pass)}, warn ${n(c.warn)}, fail ${n(c.fail)}`;
  },
  reasons: (d) =>
    objs(d.items)
      .filter((i) => i.status === 'fail')
      .map((i) => `${s(i.object)}: ${s(i.message)}`),
};
