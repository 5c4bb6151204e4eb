/**
 * Which crop cycle each scale records into, set with PUT /api/scales/{port}. The box's own
 * setting, not a synced record: another appliance has other scales. A removed cycle leaves the
 * scale unassigned (the foreign key sets it null), never pointing at nothing.
 */
export interface ScaleAssignmentTable {
  /** The scale's name: its device file's name (ttyUSB0). */
  port: string;
  cycle_id: string | null;
  /** ISO 8601 UTC. */
  assigned_at: string;
}

declare module '../db/schema.js' {
  interface Database {
    scale_assignments: ScaleAssignmentTable;
  }
}
