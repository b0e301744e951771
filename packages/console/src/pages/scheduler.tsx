import { ActionForm, Pager, present, Table, when } from '../components.js';
import { backTo, type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Cadence, LastRun, runBadge } from '../job-cells.js';
import { Layout } from '../layout.js';
import { revealedText } from '../reveal-text.js';
import { Revealed } from '../revealed.js';
import { breakAfterSeparators } from '../soft-breaks.js';

interface JobRow {
  job_id: string;
  agent_id: string;
  name: string;
  cadence: string;
  timezone: string;
  status: 'active' | 'paused';
  next_run_at: string | null;
  last_run: { status: string; error: string | null } | null;
}

interface RunRow {
  run_id: string;
  agent_id: string;
  job_name: string;
  scheduled_for: string;
  status: string;
  attempts: number;
  max_attempts: number;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
}

const RUN_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;

/** The flash after a job action, as a sentence. */
const DONE = { pause: 'Paused', resume: 'Resumed', delete: 'Deleted' } as const;

/** Rows per page of each table; the jobs and the runs page independently (`jobs_cursor`, `cursor`). */
const PAGE_SIZE = 50;
/** The query parameters that say which page of each table is shown (kept by the pagers and the actions). */
const PAGE_PARAMS = ['status', 'jobs_cursor', 'cursor'] as const;

/** Scheduler: jobs with cadence, next fire and state (pause, resume, delete); runs with status, attempts, error and timing; retry a failed run. */
export function registerScheduler(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/scheduler', async (c) => {
    const status = RUN_STATES.find((state) => state === c.req.query('status'));
    const cursor = c.req.query('cursor') || null;
    const jobsCursor = c.req.query('jobs_cursor') || null;
    const [jobs, runs] = await Promise.all([
      api<{ jobs: JobRow[]; next_cursor: string | null }>('agent-scheduler/admin/jobs/list', { limit: PAGE_SIZE, cursor: jobsCursor }),
      api<{ runs: RunRow[]; next_cursor: string | null }>('agent-scheduler/admin/runs/list', {
        ...(status ? { status } : {}),
        limit: PAGE_SIZE,
        cursor,
      }),
    ]);
    const frame = frameOf(c, base);
    const { csrf } = frame.session;
    const here = { status, jobs_cursor: jobsCursor, cursor };
    const keep = present(here);
    return c.html(
      <Layout frame={frame} title="Scheduler" current="Scheduler">
        <section aria-labelledby="jobs">
          <h2 id="jobs">Jobs</h2>
          <Table
            caption="Jobs"
            head={['Agent', 'Job', 'Cadence', 'Next run', 'State', 'Last run', '']}
            empty="No jobs."
            count={jobs.jobs.length}
            rows={jobs.jobs.map((job) => {
              const ref = { ...keep, agent_id: job.agent_id, name: job.name };
              return (
                <tr>
                  <td class="name">{breakAfterSeparators(job.agent_id)}</td>
                  <td class="name">
                    <Revealed text={job.name} visible={breakAfterSeparators} />
                  </td>
                  <Cadence cadence={job.cadence} timezone={job.timezone} />
                  <td class="time">{when(job.next_run_at)}</td>
                  <td>{job.status}</td>
                  <LastRun run={job.last_run} />
                  <td class="buttons">
                    {job.status === 'active' ? (
                      <ActionForm
                        action={`${base}/scheduler/jobs/pause`}
                        csrf={csrf}
                        label="Pause"
                        ariaLabel={`Pause ${revealedText(job.name)}`}
                        fields={ref}
                      />
                    ) : (
                      <ActionForm
                        action={`${base}/scheduler/jobs/resume`}
                        csrf={csrf}
                        label="Resume"
                        ariaLabel={`Resume ${revealedText(job.name)}`}
                        fields={ref}
                      />
                    )}
                    <ActionForm
                      action={`${base}/scheduler/jobs/delete`}
                      csrf={csrf}
                      label="Delete"
                      ariaLabel={`Delete ${revealedText(job.name)}`}
                      fields={ref}
                      confirm={`Delete job ${revealedText(job.name)} of ${job.agent_id}?`}
                      danger
                    />
                  </td>
                </tr>
              );
            })}
          />
          <Pager
            path={`${base}/scheduler`}
            params={here}
            name="jobs_cursor"
            next={jobs.next_cursor}
            label="Next page of jobs"
            fragment="jobs"
          />
        </section>
        <section aria-labelledby="runs">
          <h2 id="runs">Runs</h2>
          <form method="get" action={`${base}/scheduler`} class="toolbar">
            {jobsCursor ? <input type="hidden" name="jobs_cursor" value={jobsCursor} /> : null}
            <label for="run-status">Status</label>
            <select id="run-status" name="status">
              <option value="">any</option>
              {RUN_STATES.map((state) => (
                <option value={state} selected={state === status}>
                  {state}
                </option>
              ))}
            </select>
            <button type="submit">Filter</button>
          </form>
          <Table
            caption="Runs"
            head={['Agent', 'Job', 'Scheduled for', 'Status', 'Attempts', 'Error', 'Started', 'Finished']}
            empty="No runs."
            count={runs.runs.length}
            rows={runs.runs.map((run) => (
              <tr>
                <td class="wrap">{run.agent_id}</td>
                <td class="wrap">
                  <Revealed text={run.job_name} />
                </td>
                <td class="time">{when(run.scheduled_for)}</td>
                <td class="status">
                  <span class={runBadge(run.status)}>{run.status}</span>
                  {run.status === 'failed' ? (
                    <ActionForm
                      action={`${base}/scheduler/runs/retry`}
                      csrf={csrf}
                      label="Retry"
                      ariaLabel={`Retry run of ${revealedText(run.job_name)} at ${when(run.scheduled_for)}`}
                      fields={{ ...keep, agent_id: run.agent_id, run_id: run.run_id }}
                    />
                  ) : null}
                </td>
                <td>
                  {run.attempts}/{run.max_attempts}
                </td>
                <td class="error-text">
                  <Revealed text={run.error ?? ''} />
                </td>
                <td class="time">{when(run.started_at)}</td>
                <td class="time">{when(run.finished_at)}</td>
              </tr>
            ))}
          />
          <Pager path={`${base}/scheduler`} params={here} next={runs.next_cursor} label="Next page of runs" fragment="runs" />
        </section>
      </Layout>,
    );
  });

  for (const action of ['pause', 'resume', 'delete'] as const) {
    app.post(`/scheduler/jobs/${action}`, async (c) => {
      const form = await c.req.parseBody();
      const name = exactField(form, 'name') ?? '';
      await api(`agent-scheduler/job/${action}`, { agent_id: exactField(form, 'agent_id') ?? '', name });
      return redirectWith(c, backTo(`${base}/scheduler`, form, PAGE_PARAMS), {
        kind: 'ok',
        text: `${DONE[action]} job ${revealedText(name)}.`,
      });
    });
  }

  app.post('/scheduler/runs/retry', async (c) => {
    const form = await c.req.parseBody();
    const retried = await api('agent-scheduler/runs/retry', {
      agent_id: exactField(form, 'agent_id') ?? '',
      run_id: exactField(form, 'run_id') ?? '',
    });
    return redirectWith(c, backTo(`${base}/scheduler`, form, PAGE_PARAMS), {
      kind: 'ok',
      text: `Run ${retried.run_id} queued for retry.`,
    });
  });
}
