/**
 * Records a `feature-environment-enabled` event whenever a flag becomes enabled in an environment,
 * whichever code path wrote it (import today, toggling routes later): time to production and the
 * configuration-update counts of the insights read these events.
 */
export const sql = /* sql */ `
CREATE FUNCTION record_feature_environment_enabled() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT NEW.enabled THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF OLD.enabled THEN
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO events (type, created_by, feature_name, project, environment)
  SELECT 'feature-environment-enabled', 'system', NEW.feature_name, f.project, NEW.environment
    FROM features f WHERE f.name = NEW.feature_name;
  RETURN NULL;
END
$$;

CREATE TRIGGER feature_environment_enabled
  AFTER INSERT OR UPDATE OF enabled ON feature_environments
  FOR EACH ROW EXECUTE FUNCTION record_feature_environment_enabled();
`;
