// Pure helpers of the `taskdsl` debugger (no vscode import, unit-tested by `npm test`): the launch
// configurations it offers, and the consent question asked before a debug session starts.

export const DEBUG_TYPE = 'taskdsl';

export interface LaunchConfig {
  type: string;
  request: string;
  name: string;
  program?: string;
  task?: string;
  inputs?: Record<string, unknown>;
  model?: string;
  stopOnEntry?: boolean;
  test?: string;
  agreedPlan?: string;
  [key: string]: unknown;
}

/** What F5 debugs when there is no launch.json: the template in the active editor, stopping on entry. */
export function defaultLaunch(file: string): LaunchConfig {
  return { type: DEBUG_TYPE, request: 'launch', name: 'Debug template', program: file, stopOnEntry: true };
}

/** The entry "Add Configuration…" writes into a new launch.json. */
export function initialConfigurations(): LaunchConfig[] {
  return [{ type: DEBUG_TYPE, request: 'launch', name: 'Debug template', program: '${file}', stopOnEntry: true }];
}

/** The launch of one <test> of a *.test.xml file (the Test Explorer's Debug). */
export function testLaunch(file: string, name: string): LaunchConfig {
  return { type: DEBUG_TYPE, request: 'launch', name: `Debug test ${name}`, program: file, test: name };
}

/**
 * The configuration with any `agreedPlan` removed: a workspace's launch.json (a cloned repository's) never
 * agrees to a plan for the user. The extension asks, and adds the digest of the plan the user agreed to.
 */
export function withoutAgreement(config: LaunchConfig): LaunchConfig {
  const copy: LaunchConfig = { ...config };
  delete copy.agreedPlan;
  return copy;
}

export interface PlanAnswer {
  reasons?: string[];
  plan?: string;
  digest?: string;
  error?: string;
}

/** The JSON `taskdsl debug --plan` prints; an error answer when it is not that. */
export function parsePlan(stdout: string, stderr = ''): PlanAnswer {
  try {
    const parsed = JSON.parse(stdout);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      if (typeof parsed.error === 'string') {
        return { error: parsed.error };
      }
      if (Array.isArray(parsed.reasons) && typeof parsed.plan === 'string' && typeof parsed.digest === 'string') {
        return { reasons: parsed.reasons.filter((r: unknown) => typeof r === 'string'), plan: parsed.plan, digest: parsed.digest };
      }
    }
  } catch {
    // fall through: not JSON
  }
  const detail = (stderr || stdout).trim().split('\n').slice(-1)[0] || 'no answer';
  return { error: `taskdsl debug --plan failed: ${detail}` };
}

/** The question to ask before debugging (the plan and why it is asked), or undefined when nothing needs consent. */
export function planQuestion(answer: PlanAnswer): string | undefined {
  if (answer.error || !answer.reasons || answer.reasons.length === 0) {
    return undefined;
  }
  return `${answer.plan}\nDebug it?`;
}
