// The flag set of `npm run bench server`: an import document both flags-server and unleash-server take.
import { seededRandom } from '../test/helpers/seeded-random.js';

const REGIONS = ['eu-west', 'eu-north', 'us-east', 'us-west', 'ap-south', 'ap-east', 'sa-east'];

/**
 * `count` flags with 3 strategies each (constraints, strategy variants, tags), for project
 * `default` and environment `development`. The same count gives the same document. The context
 * fields the constraints use are part of it, as unleash-server refuses constraints on unknown ones.
 */
export function importPayload(count: number) {
  const rand = seededRandom(4242);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  const featureTags = [];
  for (let i = 0; i < count; i++) {
    const name = `bench.flag-${String(i).padStart(5, '0')}-${pick(['checkout', 'search', 'profile', 'billing'])}`;
    features.push({
      name,
      type: pick(['release', 'experiment', 'operational', 'kill-switch']),
      description: `Benchmark flag ${i}`,
      impressionData: rand() < 0.2,
    });
    featureStrategies.push(
      {
        name: 'flexibleRollout',
        featureName: name,
        sortOrder: 0,
        parameters: {
          rollout: String(Math.floor(rand() * 100)),
          stickiness: 'userId',
          groupId: name,
        },
        constraints: [
          { contextName: 'region', operator: 'IN', values: [pick(REGIONS), pick(REGIONS)] },
          {
            contextName: 'appVersion',
            operator: 'SEMVER_GT',
            value: `${Math.floor(rand() * 5)}.${Math.floor(rand() * 20)}.0`,
          },
        ],
        variants: [
          {
            name: 'control',
            weight: 500,
            weightType: 'variable',
            stickiness: 'userId',
            payload: { type: 'string', value: 'a' },
          },
          { name: 'treatment', weight: 500, weightType: 'variable', stickiness: 'userId' },
        ],
      },
      {
        // unleash-server 8 has no userWithId strategy: a user list is a constraint.
        name: 'default',
        featureName: name,
        sortOrder: 1,
        parameters: {},
        constraints: [
          {
            contextName: 'userId',
            operator: 'IN',
            values: Array.from({ length: 3 }, () => `user-${Math.floor(rand() * 1e6)}`),
          },
        ],
      },
      {
        name: 'default',
        featureName: name,
        sortOrder: 2,
        parameters: {},
        constraints: [
          { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'] },
        ],
      },
    );
    featureEnvironments.push({ name, featureName: name, enabled: rand() < 0.7 });
    featureTags.push({
      featureName: name,
      tagType: 'team',
      tagValue: pick(['payments', 'growth', 'platform']),
    });
  }
  return {
    project: 'default',
    environment: 'development',
    data: {
      features,
      featureStrategies,
      featureEnvironments,
      contextFields: [
        { name: 'region', legalValues: REGIONS.map((value) => ({ value })) },
        { name: 'appVersion' },
        { name: 'email' },
      ],
      featureTags,
      tagTypes: [{ name: 'team', description: 'Owning team' }],
      segments: [],
      dependencies: [],
    },
  };
}
