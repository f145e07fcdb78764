/**
 * The event types of the log: unleash-server's names, so scripts reading its event search read
 * ours. Modules add theirs here (segments, context fields, tags, …).
 */
export const EVENT_TYPES = {
  featureCreated: 'feature-created',
  featureMetadataUpdated: 'feature-metadata-updated',
  featureStaleOn: 'feature-stale-on',
  featureStaleOff: 'feature-stale-off',
  featureTypeUpdated: 'feature-type-updated',
  featureImpressionDataUpdated: 'feature-impression-data-updated',
  featureArchived: 'feature-archived',
  featureRevived: 'feature-revived',
  featureDeleted: 'feature-deleted',
  featureStrategyAdd: 'feature-strategy-add',
  featureStrategyUpdate: 'feature-strategy-update',
  featureStrategyRemove: 'feature-strategy-remove',
  strategyOrderChanged: 'strategy-order-changed',
  featureEnvironmentEnabled: 'feature-environment-enabled',
  featureEnvironmentDisabled: 'feature-environment-disabled',
  featureEnvironmentVariantsUpdated: 'feature-environment-variants-updated',
  featureTagged: 'feature-tagged',
  featureUntagged: 'feature-untagged',
  featureDependencyAdded: 'feature-dependency-added',
  featureDependencyRemoved: 'feature-dependency-removed',
  featureDependenciesRemoved: 'feature-dependencies-removed',
  featuresImported: 'features-imported',
} as const;

export type EventType = (typeof EVENT_TYPES)[keyof typeof EVENT_TYPES];
