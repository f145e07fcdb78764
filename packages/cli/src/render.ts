import type { Outcome } from './apply.js';
import { type Action, type Change, countOf, type Plan, shownValue } from './plan.js';

/** The plan and the outcome of `apply`, as text for a terminal, JSON for programs, Markdown for a pull request. */

const SYMBOL = { create: '+', update: '~', archive: '-' } as const;

const subject = (action: Action) =>
  `${action.kind} ${action.project === undefined ? '' : `${action.project}/`}${action.name}`;

function changeLine(change: Change): string {
  if (change.op === '~')
    return `${change.path}: ${shownValue(change.before)} → ${shownValue(change.after)}`;
  if (change.op === '+') return `${change.path}: ${shownValue(change.after)}`;
  return change.before === undefined ? change.path : `${change.path}: ${shownValue(change.before)}`;
}

export function summaryLine(plan: Plan): string {
  const { create, update, archive } = countOf(plan);
  return create + update + archive === 0
    ? 'No changes: the server matches the files.'
    : `Plan: ${create} to create, ${update} to update, ${archive} to archive.`;
}

export function planText(plan: Plan, server: string): string {
  const lines = [`Comparing the files with ${server}`, ''];
  for (const action of plan.actions) {
    lines.push(
      `${SYMBOL[action.action]} ${subject(action)} (${action.action})${action.file ? `  ${action.file}` : ''}`,
    );
    for (const drift of action.drift) {
      lines.push(
        `    ! drift: ${drift.field} was changed outside the files by ${drift.by} at ${drift.at} (${drift.event}); apply sets it back to the file`,
      );
    }
    if (action.action !== 'archive') {
      for (const change of action.changes) lines.push(`    ${change.op} ${changeLine(change)}`);
    }
  }
  if (plan.notes.length > 0) {
    lines.push('', 'Left as they are:');
    for (const note of plan.notes) {
      lines.push(
        `  i ${note.kind} ${note.project === undefined ? '' : `${note.project}/`}${note.name}: ${note.message}`,
      );
    }
  }
  lines.push('', summaryLine(plan));
  return `${lines.join('\n')}\n`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function planMarkdown(plan: Plan, server: string): string {
  const lines = [`### flags plan: ${summaryLine(plan)}`, '', `Server: ${server}`, ''];
  if (plan.actions.length > 0) {
    lines.push('| | Resource | Changes |', '|---|---|---|');
    for (const action of plan.actions) {
      const details = [
        ...action.drift.map(
          (drift) => `⚠️ drift: \`${drift.field}\` changed by ${drift.by} at ${drift.at}`,
        ),
        ...(action.action === 'archive'
          ? []
          : action.changes.map((change) => `\`${change.op} ${changeLine(change)}\``)),
      ];
      lines.push(`| ${action.action} | ${cell(subject(action))} | ${cell(details.join('<br>'))} |`);
    }
    lines.push('');
  }
  if (plan.notes.length > 0) {
    lines.push('<details><summary>Left as they are</summary>', '');
    for (const note of plan.notes) {
      lines.push(
        `- ${note.kind} ${note.project === undefined ? '' : `${note.project}/`}${note.name}: ${note.message}`,
      );
    }
    lines.push('', '</details>', '');
  }
  return `${lines.join('\n')}`;
}

export function planJson(plan: Plan, server: string): unknown {
  return { server, summary: countOf(plan), actions: plan.actions, notes: plan.notes };
}

export function outcomeText(outcomes: readonly Outcome[]): string {
  const lines = outcomes.map((outcome) => {
    const head = `${SYMBOL[outcome.action.action]} ${subject(outcome.action)} (${outcome.action.action})`;
    if (outcome.result === 'applied') return `${head}: done`;
    if (outcome.result === 'conflict')
      return `${head}: CONFLICT, nothing of it written: ${outcome.message}`;
    return `${head}: FAILED: ${outcome.message}`;
  });
  const count = (result: Outcome['result']) => outcomes.filter((o) => o.result === result).length;
  lines.push(
    '',
    outcomes.length === 0
      ? 'Nothing to apply: the server matches the files.'
      : `Applied ${count('applied')}, ${count('conflict')} conflict(s), ${count('failed')} failed.`,
  );
  return `${lines.join('\n')}\n`;
}

export function outcomeMarkdown(outcomes: readonly Outcome[]): string {
  const lines = ['### flags apply', '', '| Result | Resource | Message |', '|---|---|---|'];
  for (const outcome of outcomes) {
    lines.push(
      `| ${outcome.result} | ${cell(`${outcome.action.action} ${subject(outcome.action)}`)} | ${cell(outcome.message ?? '')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function outcomeJson(outcomes: readonly Outcome[]): unknown {
  return {
    outcomes: outcomes.map((outcome) => ({
      kind: outcome.action.kind,
      project: outcome.action.project,
      name: outcome.action.name,
      action: outcome.action.action,
      result: outcome.result,
      ...(outcome.message ? { message: outcome.message } : {}),
    })),
  };
}
