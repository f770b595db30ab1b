import { objectName } from '../../cluster/broker/snapshot.js';
import { fail, pass, type Check } from '../check.js';

/** The checks of exchanges. The built-in ones ('' and amq.*) are the broker's, not the application's. */

const builtInExchange = (name: string): boolean => name === '' || name.startsWith('amq.');

export const exchangeDurable: Check = {
  id: 'exchange-durable',
  title: 'exchanges survive a node restart',
  run: (s) =>
    s.exchanges
      .filter((e) => !builtInExchange(e.name))
      .map((e) => {
        const obj = objectName('exchange', e.vhost, e.name);
        return e.durable === false
          ? fail(
              'exchange-durable',
              obj,
              'transient: it and its bindings are gone when the node restarts; publishes to it then fail or, through other exchanges, go nowhere',
              'declare it durable (delete and redeclare it, then its bindings)',
            )
          : pass('exchange-durable', obj, `durable ${e.type} exchange`);
      }),
};
