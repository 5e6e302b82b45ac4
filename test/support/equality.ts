import { expect } from '@jest/globals';
import { formatTimestamp, Instant } from '../../src/platform/values/time';

/**
 * A row's timestamp stays PostgreSQL's text (an Instant) where an entity's is a Date: the same instant either way,
 * to the microsecond, as an answer writes it. Service results compare with Dates as they did before Instants.
 */
expect.addEqualityTesters([
  function sameInstant(a: unknown, b: unknown) {
    const either = a instanceof Instant || b instanceof Instant;
    const both = (a instanceof Instant || a instanceof Date) && (b instanceof Instant || b instanceof Date);
    if (!either) return undefined;
    return both ? formatTimestamp(a as Date | Instant) === formatTimestamp(b as Date | Instant) : false;
  },
]);
