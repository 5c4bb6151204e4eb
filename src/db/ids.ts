import { v7 } from 'uuid';

/** A UUIDv7: time-ordered, so records from several appliances never collide upstream and sort by creation. */
export const newId = (): string => v7();

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
