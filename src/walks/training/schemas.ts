import type { ObjectSchema } from '../../http/route.js';
import { dateSchema, idSchema } from '../../http/schemas.js';

/** The training export's filter (GET {org}/training-data). */
export const trainingQuery: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    greenhouse_id: idSchema("Only walks saved to this greenhouse's crop cycles. Another organization's greenhouse is a 404."),
    from: {
      ...dateSchema,
      description:
        "First day (YYYY-MM-DD, inclusive) a walk was recorded on, in its greenhouse's time zone (UTC for walks in no crop cycle).",
    },
    to: { ...dateSchema, description: 'Last day (YYYY-MM-DD, inclusive), read the same way. Before from is a 422.' },
  },
};
