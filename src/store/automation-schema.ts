/**
 * The tables of automations (docs/automations.mdx; migration 0011): automations, their runs, the keys that
 * make a run exactly once, the verified webhook deliveries waiting to be processed, and the
 * polling fallback's cursors.
 */

export interface AutomationTables {
  automations: AutomationTable;
  automation_runs: AutomationRunTable;
  automation_run_keys: AutomationRunKeyTable;
  hook_deliveries: HookDeliveryTable;
  automation_poll_cursors: AutomationPollCursorTable;
}

export interface AutomationTable {
  /** `aut_…` */
  id: string;
  project_id: string;
  name: string;
  /** JSON of the trigger (automation.ts). */
  trigger: string;
  instruction: string;
  draft: number;
  enabled: number;
  /**
   * Schedules: the latest scheduled time handled (fired or skipped), or the creation time before
   * the first one; null for other triggers.
   */
  handled_through: string | null;
  created_at: string;
  updated_at: string;
}

export interface AutomationRunTable {
  /** `arun_…` */
  id: string;
  automation_id: string;
  project_id: string;
  trigger_type: string;
  /** JSON list of the changes it carries, as the job's `changes` take them. */
  changes: string;
  scheduled_for: string | null;
  job_id: string | null;
  /**
   * `running` until its job ends (the outcome shown then is computed from the job), or a final
   * outcome decided without a job: `skipped`, `no-changes-needed`, `failed`.
   */
  outcome: string;
  reason: string | null;
  created_at: string;
}

/** One dedupe key (dedupe.ts) of a run: unique per automation, so that a change runs once. */
export interface AutomationRunKeyTable {
  automation_id: string;
  key: string;
  run_id: string;
}

/** A verified webhook delivery, stored before it is answered and processed in the background. */
export interface HookDeliveryTable {
  /** `hkd_…` */
  id: string;
  project_id: string;
  /** The context repository's name from the URL, or `docs`. */
  name: string;
  /** The host's delivery id (deliveries.ts): unique per (project, name). */
  delivery_id: string;
  host: string;
  event: string | null;
  content_type: string | null;
  /** The raw body, base64 (it was verified as bytes). */
  body: string;
  received_at: string;
  /** Set once processed; null: waiting (picked up again after a crash). */
  processed_at: string | null;
  /** What processing made of it: `runs:N`, or `ignored: …`. */
  result: string | null;
}

/** Where the polling fallback stopped listing a repository's changes (a ChangeCursor as JSON). */
export interface AutomationPollCursorTable {
  project_id: string;
  /** The context repository's name, or `docs`. */
  repository: string;
  cursor: string;
  updated_at: string;
}
