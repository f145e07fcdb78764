# Turn maintenance-mode on in the development environment, with the demo's admin token.
curl -s -X POST -H "Authorization: ${ADMIN_TOKEN:-*:*.demo-admin-token}" \
  "${SERVER_URL:-http://localhost:4242}/api/admin/projects/default/features/maintenance-mode/environments/development/on"
