import fc from 'fast-check';
import { RingDeque } from '../../src/exec/ring-deque';

describe('RingDeque', () => {
  it('behaves like an array queue through growth and wrap-around', () => {
    const op = fc.oneof(fc.record({ push: fc.integer() }), fc.constant('shift' as const), fc.constant('clear' as const));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const ring = new RingDeque<number>(2);
        const model: number[] = [];
        for (const o of ops) {
          if (o === 'shift') expect(ring.shift()).toBe(model.shift());
          else if (o === 'clear') {
            ring.clear();
            model.length = 0;
          } else {
            ring.push(o.push);
            model.push(o.push);
          }
          expect({ length: ring.length, front: ring.peek(), last: ring.at(ring.length - 1) }).toEqual({
            length: model.length,
            front: model[0],
            last: model[model.length - 1],
          });
        }
        expect(Array.from({ length: ring.length }, (_, i) => ring.at(i))).toEqual(model);
        expect(ring.at(-1)).toBeUndefined();
        expect(ring.at(ring.length)).toBeUndefined();
      }),
    );
  });
});
