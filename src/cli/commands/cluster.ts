import { clusterDown, clusterLogs, clusterReset, clusterStatus, clusterUp } from '../../cluster/cluster.js';
import { buildImage, ensureImage } from '../../cluster/image.js';
import type { Context } from '../../context.js';
import { renderReset, renderStatus, renderUp } from '../../report/cluster.js';
import { formatMs } from '../../util/duration.js';
import { emit } from '../output.js';
import type { Invocation } from '../program.js';

type Opts<C extends Invocation['command']> = Extract<Invocation, { command: C }>['options'];

export async function up(ctx: Context, o: Opts<'cluster up'>): Promise<number> {
  const r = await clusterUp(ctx, { timeoutMs: o.timeoutMs });
  emit(o, 'cluster-up', r, renderUp(r));
  return 0;
}

export async function down(ctx: Context, o: Opts<'cluster down'>): Promise<number> {
  const r = await clusterDown(ctx, { volumes: o.volumes });
  emit(o, 'cluster-down', r, `cluster down in ${formatMs(r.elapsedMs)}`);
  return 0;
}

export async function reset(ctx: Context, o: Opts<'cluster reset'>): Promise<number> {
  if (o.hard) {
    const d = await clusterDown(ctx, { volumes: true });
    const u = await clusterUp(ctx, { timeoutMs: o.timeoutMs });
    emit(o, 'cluster-reset', { hard: true, elapsedMs: d.elapsedMs + u.elapsedMs, up: u }, renderUp(u));
    return 0;
  }
  const r = await clusterReset(ctx, { timeoutMs: o.timeoutMs });
  emit(o, 'cluster-reset', r, renderReset(r));
  return 0;
}

export async function status(ctx: Context, o: Opts<'cluster status'>): Promise<number> {
  const r = await clusterStatus(ctx);
  emit(o, 'cluster-status', r, renderStatus(r));
  return 0;
}

export async function logs(ctx: Context, o: Opts<'cluster logs'>): Promise<number> {
  await clusterLogs(ctx, { follow: o.follow, ...(o.node ? { node: o.node } : {}), ...(o.tail ? { tail: o.tail } : {}) });
  return 0;
}

export async function image(ctx: Context, o: Opts<'cluster image'>): Promise<number> {
  ctx.progress.start('looking for the RabbitMQ image');
  if (o.rebuild) {
    const r = await buildImage(ctx.config, ctx.progress);
    ctx.progress.succeed(`built ${ctx.config.builtImage} (rabbitmq-server ${r.version}) in ${formatMs(r.elapsedMs)}`);
    emit(o, 'cluster-image', { image: ctx.config.builtImage, how: 'built', ...r }, `image ${ctx.config.builtImage}`);
    return 0;
  }
  const r = await ensureImage(await ctx.docker(), ctx.config, ctx.progress);
  ctx.progress.succeed(`image ${r.image} ${r.how}${r.how === 'present' ? '' : ` in ${formatMs(r.elapsedMs)}`}`);
  emit(o, 'cluster-image', r, `image ${r.image}`);
  return 0;
}
