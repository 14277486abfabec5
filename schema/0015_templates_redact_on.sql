-- Redaction on by default (issue #13). A custom template's `redact` used to mean "force redaction even when the
-- appliance does not"; false left the decision to the global [backup] redact_secrets. Now redaction happens when
-- redact_secrets is on AND the template's `redact` is true, so false means "never redact this template". Existing
-- custom templates get true: their old false never asked for cleartext, and redact_secrets still decides for them.
-- Built-in templates are rewritten from their YAML files at every start.
UPDATE templates SET spec = json_set(spec, '$.redact', json('true')) WHERE builtin = 0 AND json_valid(spec);
