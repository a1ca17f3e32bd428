//! The name this machine goes by in exported records.

/// This machine's name, for `service.instance.id` and OCSF's `src_endpoint.name`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "toolgate".to_owned())
}
