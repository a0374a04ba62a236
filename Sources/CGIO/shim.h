// GIO's GSettings, for following the desktop's sound settings (Sources/TabBarServer/DesktopSettings.swift).
// g_signal_connect is a macro and GSettings aborts on a schema that is not installed: these helpers
// make both usable from Swift.
#include <gio/gio.h>
#include <sys/eventfd.h>

/// A GSettings for `schema_id`, or NULL when that schema is not installed (g_settings_new would abort).
static inline GSettings *tabbard_settings_new(const char *schema_id) {
    GSettingsSchemaSource *source = g_settings_schema_source_get_default();
    if (source == NULL) return NULL;
    GSettingsSchema *schema = g_settings_schema_source_lookup(source, schema_id, TRUE);
    if (schema == NULL) return NULL;
    g_settings_schema_unref(schema);
    return g_settings_new(schema_id);
}

/// Whether `settings`' schema has `key` (reading a missing key aborts).
static inline int tabbard_settings_has_key(GSettings *settings, const char *key) {
    GSettingsSchema *schema = NULL;
    g_object_get(settings, "settings-schema", &schema, NULL);
    if (schema == NULL) return 0;
    int has = g_settings_schema_has_key(schema, key);
    g_settings_schema_unref(schema);
    return has;
}

/// Connects `callback` to `settings`' "changed" signal.
static inline gulong tabbard_settings_on_changed(GSettings *settings,
                                                 void (*callback)(GSettings *, const gchar *, gpointer), gpointer data) {
    return g_signal_connect(settings, "changed", G_CALLBACK(callback), data);
}

/// The name of the settings backend in use (e.g. "dconf", "keyfile", "memory").
static inline const char *tabbard_settings_backend_name(GSettings *settings) {
    GSettingsBackend *backend = NULL;
    g_object_get(settings, "backend", &backend, NULL);
    if (backend == NULL) return "";
    const char *name = G_OBJECT_TYPE_NAME(backend);
    g_object_unref(backend);
    return name;
}
