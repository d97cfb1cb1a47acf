"""Salt 3007's config keys, and what briny does with each: one table for warnings and docs.

Runs once at daemon start (:func:`warn_unsupported`, ``briny-master`` and ``briny-minion``) and
when ``docs/migrating.md``'s list of ignored keys is generated (:func:`markdown`, checked by a
test). Every key of a master or minion config is one of:

- **supported**: briny reads it (its default is in :mod:`briny.common.config`'s tables, or
  briny's code reads it: :data:`READ_MINION`, :data:`READ_MASTER`, :data:`READ_BOTH`);
- **ignored**: a Salt 3007 setting of that role briny does not support; accepted and without
  effect, named in a warning;
- **unknown**: neither a Salt 3007 setting of that role nor briny's, named in a warning too. It
  stays in the opts, where ``config.get`` and templates still find it, as Salt keeps it.

A dotted key (``mysql.host``, ``hosts.file``) is a module's setting that modules read through
``config.get``: it is never warned about. The key names below are Salt 3007.17's
``DEFAULT_MINION_OPTS`` and ``DEFAULT_MASTER_OPTS`` (names only), and the settings Salt reads that
those tables do not hold (:data:`SALT_OTHER_BOTH`, :data:`SALT_OTHER_MINION`,
:data:`SALT_OTHER_MASTER`): the rest of its ``VALID_OPTS``, the proxy minion's and salt-api's
defaults, the netapi modules' blocks (``rest_cherrypy``, ...) and the top-level settings its
daemons, subsystems and modules read by name (``return``, ``vault``, ``proxy``, ``peer_run``, a
masterless minion's ``ext_pillar``, ...), so a Salt setting briny does not act on is never called
"not a Salt setting".
"""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

from .config import MASTER_DEFAULTS, MINION_DEFAULTS

log = logging.getLogger(__name__)

SALT_VERSION = "3007"

SALT_MINION_KEYS: frozenset[str] = frozenset(
    """
acceptance_wait_time acceptance_wait_time_max always_verify_signature append_minionid_config_dirs
auth_safemode auth_timeout auth_tries auto_accept autoload_dynamic_modules autosign_timeout backup_mode
beacons_before_connect cache cache_jobs cache_sreqs cachedir clean_dynamic_modules cluster_mode cmd_safe
conf_file cython_enable decrypt_pillar decrypt_pillar_default decrypt_pillar_delimiter
decrypt_pillar_renderers default_include default_top disable_modules disable_returners disabled_requisites
discovery enable_fqdns_grains enable_gpu_grains enable_legacy_startup_events enable_zip_modules
encryption_algorithm engines env_order event_match_type ext_job_cache extension_modules extmod_blacklist
extmod_whitelist failhard features file_buffer_size file_client file_ignore_glob file_ignore_regex file_recv
file_recv_max_size file_roots fileserver_backend fileserver_followsymlinks fileserver_ignoresymlinks fips_mode
git_pillar_base git_pillar_branch git_pillar_env git_pillar_fallback git_pillar_global_lock
git_pillar_includes git_pillar_insecure_auth git_pillar_passphrase git_pillar_password git_pillar_privkey
git_pillar_pubkey git_pillar_refspecs git_pillar_root git_pillar_ssl_verify git_pillar_update_interval
git_pillar_user gitfs_base gitfs_disable_saltenv_mapping gitfs_fallback gitfs_global_lock gitfs_insecure_auth
gitfs_mountpoint gitfs_passphrase gitfs_password gitfs_privkey gitfs_pubkey gitfs_ref_types gitfs_refspecs
gitfs_remotes gitfs_root gitfs_saltenv gitfs_saltenv_blacklist gitfs_saltenv_whitelist gitfs_ssl_verify
gitfs_update_interval gitfs_user global_state_conditions gpg_cache gpg_cache_backend gpg_cache_ttl
gpg_decrypt_must_succeed grains grains_blacklist grains_cache grains_cache_expiration grains_deep_merge
grains_dirs grains_refresh_every hash_type hgfs_update_interval http_connect_timeout http_max_body
http_request_timeout id id_function interface ipc_mode ipc_write_buffer ipv6 keysize local lock_saltenv
log_datefmt log_datefmt_logfile log_file log_fmt_console log_fmt_jid log_fmt_logfile log_granular_levels
log_level log_level_logfile log_rotate_backup_count log_rotate_max_bytes loop_interval master
master_alive_interval master_failback master_failback_interval master_finger master_port master_shuffle
master_sign_key_name master_tops_first master_tries master_type master_uri_format max_event_size mine_enabled
mine_interval mine_return_job minion_id_caching minion_id_lowercase minion_id_remove_domain
minion_jid_queue_hwm minion_memory_headroom minion_memory_max minion_restart_command minion_sign_messages
minionfs_update_interval module_dirs modules_max_memory multifunc_ordered multiprocessing on_demand_ext_pillar
open_mode optimization_order outputter_dirs password permissive_pki_access pidfile pillar_cache
pillar_cache_backend pillar_cache_ttl pillar_includes_override_sls pillar_merge_lists pillar_opts pillar_roots
pillar_source_merging_strategy pillarenv pillarenv_from_saltenv ping_interval pki_dir process_count_max
providers proxy_host proxy_password proxy_port proxy_username pub_ret publisher_acl publisher_acl_blacklist
random_master random_reauth_delay random_startup_delay range_server reactor_niceness reactor_refresh_interval
reactor_worker_hwm reactor_worker_threads recon_default recon_max recon_randomize rejected_retry render_dirs
renderer renderer_blacklist renderer_whitelist request_channel_timeout request_channel_tries
resolve_dns_fallback restart_on_error retry_dns retry_dns_count return_retry_timer return_retry_timer_max
return_retry_tries returner_dirs root_dir roots_update_interval s3fs_update_interval salt_cp_chunk_size
saltenv schedule scheduler_before_connect sign_pub_messages signing_algorithm sls_list snapper_states
snapper_states_config sock_dir sock_pool_size source_address source_interface_name source_publish_port
source_ret_port ssh_merge_pillar ssl start_event_grains startup_states state_aggregate state_auto_order
state_events state_output state_output_diff state_output_profile state_queue state_top state_top_saltenv
state_verbose states_dirs sudo_user svnfs_update_interval syndic_finger syndic_retries
tcp_authentication_retries tcp_keepalive tcp_keepalive_cnt tcp_keepalive_idle tcp_keepalive_intvl tcp_pub_port
tcp_pull_port tcp_reconnect_backoff test thorium_interval thorium_roots thorium_top thoriumenv top_file
top_file_merging_strategy transport unique_jid update_restart_services update_url use_master_when_local user
username utils_dirs verify_env verify_master_pubkey_sign whitelist_modules winrepo_branch
winrepo_cache_expire_max winrepo_cache_expire_min winrepo_cachefile winrepo_dir winrepo_dir_ng
winrepo_fallback winrepo_insecure_auth winrepo_installer_cache_expire winrepo_passphrase winrepo_password
winrepo_privkey winrepo_pubkey winrepo_refspecs winrepo_remotes winrepo_remotes_ng winrepo_source_dir
winrepo_ssl_verify winrepo_user zmq_filtering zmq_monitor
""".split()
)

SALT_MASTER_KEYS: frozenset[str] = frozenset(
    """
allow_minion_key_revoke archive_jobs auth_events auth_mode auto_accept cache cache_sreqs cachedir
clean_dynamic_modules cli_summary client_acl_verify cluster_id cluster_key_pass cluster_mode cluster_peers
cluster_pki_dir cluster_pool_port con_cache conf_file cython_enable decrypt_pillar decrypt_pillar_default
decrypt_pillar_delimiter decrypt_pillar_renderers default_include default_top detect_remote_minions discovery
django_auth_path django_auth_settings drop_messages_signature_fail dummy_pub eauth_acl_module eauth_tokens
enable_gpu_grains enable_ssh_minions enforce_mine_cache engines env_order event_match_type
event_publisher_niceness event_return event_return_blacklist event_return_niceness event_return_queue
event_return_whitelist ext_job_cache ext_pillar extension_modules external_auth extmod_blacklist
extmod_whitelist failhard features file_buffer_size file_client file_ignore_glob file_ignore_regex file_recv
file_recv_max_size file_roots fileserver_backend fileserver_followsymlinks fileserver_ignoresymlinks
fileserver_interval fileserver_update_niceness fileserver_verify_config fips_mode gather_job_timeout
git_pillar_base git_pillar_branch git_pillar_env git_pillar_fallback git_pillar_global_lock
git_pillar_includes git_pillar_insecure_auth git_pillar_passphrase git_pillar_password git_pillar_privkey
git_pillar_pubkey git_pillar_refspecs git_pillar_root git_pillar_ssl_verify git_pillar_update_interval
git_pillar_user git_pillar_verify_config gitfs_base gitfs_disable_saltenv_mapping gitfs_fallback
gitfs_global_lock gitfs_insecure_auth gitfs_mountpoint gitfs_passphrase gitfs_password gitfs_privkey
gitfs_pubkey gitfs_ref_types gitfs_refspecs gitfs_remotes gitfs_root gitfs_saltenv gitfs_saltenv_blacklist
gitfs_saltenv_whitelist gitfs_ssl_verify gitfs_update_interval gitfs_user gpg_cache gpg_cache_backend
gpg_cache_ttl gpg_decrypt_must_succeed hash_type hgfs_base hgfs_branch_method hgfs_mountpoint hgfs_remotes
hgfs_root hgfs_saltenv_blacklist hgfs_saltenv_whitelist hgfs_update_interval http_connect_timeout
http_max_body http_request_timeout interface ipc_mode ipc_write_buffer ipv6 jinja_env jinja_lstrip_blocks
jinja_sls_env jinja_trim_blocks job_cache job_cache_store_endtime keep_acl_in_token keep_jobs
keep_jobs_seconds key_cache key_logfile key_pass keysize local lock_saltenv log_datefmt log_datefmt_logfile
log_file log_fmt_console log_fmt_jid log_fmt_logfile log_granular_levels log_level log_level_logfile
log_rotate_backup_count log_rotate_max_bytes loop_interval maintenance_interval maintenance_niceness
master_job_cache master_pubkey_signature master_roots master_sign_key_name master_sign_pubkey master_stats
master_stats_event_iter master_tops master_tops_first master_use_pubkey_signature max_event_size max_minions
max_open_files memcache_debug memcache_expire_seconds memcache_full_cleanup memcache_max_items min_extra_mods
minimum_auth_version minion_data_cache minion_data_cache_events minionfs_blacklist minionfs_env
minionfs_mountpoint minionfs_update_interval minionfs_whitelist module_dirs mworker_niceness
mworker_queue_niceness netapi_allow_raw_shell netapi_enable_clients nodegroups on_demand_ext_pillar open_mode
optimization_order order_masters outputter_dirs pass_dir pass_gnupghome pass_strict_fetch pass_variable_prefix
peer permissive_acl permissive_pki_access pidfile pillar_cache pillar_cache_backend pillar_cache_ttl
pillar_includes_override_sls pillar_merge_lists pillar_opts pillar_roots pillar_safe_render_error
pillar_source_merging_strategy pillar_version pillarenv ping_on_rotate pki_dir preserve_minion_cache pub_hwm
pub_server_niceness publish_drain_timeout publish_port publish_session publish_signing_algorithm
publish_timeout publisher_acl publisher_acl_blacklist queue_dirs range_server reactor reactor_niceness
reactor_refresh_interval reactor_worker_hwm reactor_worker_threads regen_thin remote_minions_port renderer
renderer_blacklist renderer_whitelist req_server_niceness request_server_aes_session request_server_ttl
require_minion_sign_messages ret_port root_dir roots_update_interval rotate_aes_key runner_dirs runner_returns
s3fs_update_interval salt_cp_chunk_size saltenv schedule search serial show_jid show_timeout sign_pub_messages
signing_key_pass sock_dir sock_pool_size sqlite_queue_dir ssh_config_file ssh_identities_only ssh_keepalive
ssh_keepalive_count_max ssh_keepalive_interval ssh_list_nodegroups ssh_log_file ssh_passwd ssh_port
ssh_priv_passwd ssh_scan_ports ssh_scan_timeout ssh_sudo ssh_sudo_user ssh_timeout ssh_use_home_key ssh_user
ssl state_aggregate state_auto_order state_events state_output state_output_diff state_output_profile
state_top state_top_saltenv state_verbose sudo_acl svnfs_branches svnfs_mountpoint svnfs_remotes svnfs_root
svnfs_saltenv_blacklist svnfs_saltenv_whitelist svnfs_tags svnfs_trunk svnfs_update_interval
syndic_event_forward_timeout syndic_failover syndic_forward_all_events syndic_jid_forward_cache_hwm
syndic_log_file syndic_master syndic_pidfile syndic_wait tcp_keepalive tcp_keepalive_cnt tcp_keepalive_idle
tcp_keepalive_intvl tcp_master_pub_port tcp_master_publish_pull tcp_master_pull_port tcp_master_workers test
thin_extra_mods thorium_interval thorium_roots thorium_top thoriumenv timeout token_expire
token_expire_user_override top_file_merging_strategy transport unique_jid user utils_dirs verify_env
winrepo_branch winrepo_cachefile winrepo_dir winrepo_dir_ng winrepo_fallback winrepo_insecure_auth
winrepo_passphrase winrepo_password winrepo_privkey winrepo_pubkey winrepo_refspecs winrepo_remotes
winrepo_remotes_ng winrepo_ssl_verify winrepo_user worker_threads zmq_backlog zmq_filtering zmq_monitor
""".split()
)

# Salt 3007 settings outside DEFAULT_MINION_OPTS / DEFAULT_MASTER_OPTS (names only, gathered from the
# reference install: VALID_OPTS, DEFAULT_PROXY_MINION_OPTS, DEFAULT_API_OPTS, the netapi modules'
# config blocks and the top-level keys Salt's daemons, subsystems and modules read from their config).
SALT_OTHER_BOTH: frozenset[str] = frozenset(
    """
append_domain backend ca_bundle ca_bundle_url color_theme ext_pillar ext_pillar_first fileserver_events
fileserver_list_cache_time fluent_handler gpg_keydir include lazy_loader_strict_matching log4mongo_handler
logstash_udp_handler logstash_zmq_handler mysql output_file pass_to_ext_pillars pepa_delimiter pepa_grains
pepa_pillar pepa_roots pepa_validate postgres run_schedule_jobs_in_background sentry_handler sqlcipher sqlite3
state_output_exclude state_output_terse state_tabular strip_colors use_yamlloader_old vault verify_ssl
""".split()
)
SALT_OTHER_MINION: frozenset[str] = frozenset(
    """
add_proxymodule_to_opts bootstrap_delay enable_lspci fibre_channel_grains grains_refresh_pre_exec iscsi_grains
metadata_server_grains minion_pillar_cache module_executors napalm_host_dns_grain no_proxy nvme_grains proxy
proxy_always_alive proxy_deep_merge_pillar_in_opts proxy_keep_alive proxy_keep_alive_interval
proxy_merge_grains_in_module proxy_merge_pillar_in_opts proxy_merge_pillar_in_opts_strategy proxy_mines_pillar
return splaytime state_compress_ids textfsm_index_file textfsm_path textfsm_platform_column_name
textfsm_platform_grain thin_dir venv_bin yum_provider
""".split()
)
SALT_OTHER_MASTER: frozenset[str] = frozenset(
    """
api_logfile api_pidfile autoreject_file autosign_file autosign_grains_dir eauth_redis_host eauth_redis_port
event_return_queue_max_seconds ext_processes mysql_auth peer_run presence_events rest_cherrypy rest_timeout
rest_tornado rest_wsgi roster roster_defaults roster_file sharedsecret ssh_ext_alternatives ssh_grains
ssh_max_procs ssh_minion_opts ssh_options ssh_priv ssh_remote_port_forwards ssh_run_pre_flight
ssh_update_roster ssh_wipe syndic_dir token_dir token_file yubico_users
""".split()
)

# briny's settings its code reads that have no entry in the defaults tables (their default is
# where they are read). tests/unit/common/test_saltkeys.py scans the code: a key read there must
# be supported here, and each of these must still be read.
READ_BOTH = frozenset(
    """
conf_dir conf_file force_color http_request_timeout jinja_lstrip_blocks jinja_trim_blocks nested_indent no_color
output_indent pillar_raise_on_missing pillarenv_from_saltenv renderer_blacklist renderer_whitelist state_events state_output_pct
state_output_profile stateconf_end_marker stateconf_goal_state stateconf_start_state stateconf_state_func
""".split()
)
READ_MINION = frozenset(
    """
autoload_dynamic_modules beacons clean_dynamic_modules cmd_safe disabled_requisites local loop_interval
master_alive_interval master_failback master_failback_interval master_type mine_functions proc_file_delay providers
reactor_worker_hwm reactor_worker_threads schedule service_timeout state_queue use_master_when_local
""".split()
)
# briny-api (master/api/) reads the API's keys from the master config
READ_MASTER = frozenset(
    "keep_jobs_seconds master_job_cache mine_get schedule external_auth netapi_enable_clients token_expire "
    "rest_cherrypy rest_tornado api_logfile api_pidfile".split()
)
# in the defaults tables, but nothing acts on them yet: ignored (and warned about) until it does
NOT_ACTED_ON = frozenset("random_reauth_delay startup_states transport".split())
# in the defaults both daemons share, but only the master acts on them (a minion warns); none now:
# a masterless minion runs ``reactor`` (a minion with a master warns at start that it does not)
MASTER_ONLY: frozenset[str] = frozenset()

_ROLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "minion": (
        SALT_MINION_KEYS | SALT_OTHER_BOTH | SALT_OTHER_MINION,
        frozenset(MINION_DEFAULTS) - NOT_ACTED_ON - MASTER_ONLY | READ_BOTH | READ_MINION,
    ),
    "master": (
        SALT_MASTER_KEYS | SALT_OTHER_BOTH | SALT_OTHER_MASTER,
        frozenset(MASTER_DEFAULTS) - NOT_ACTED_ON | READ_BOTH | READ_MASTER,
    ),
}


def classify(role: str, key: str) -> str:
    """``supported``, ``ignored`` (a Salt setting briny does not act on) or ``unknown`` (neither
    Salt's nor briny's) for ``key`` in the ``role`` (``master``/``minion``) config; a dotted
    module setting is ``supported`` (modules read it with ``config.get``)."""
    salt, supported = _ROLES[role]
    if key in supported or "." in key or key.startswith("__"):
        return "supported"
    return "ignored" if key in salt else "unknown"


def ignored(role: str) -> list[str]:
    """Every Salt 3007 ``role`` setting briny does not support, sorted."""
    salt, supported = _ROLES[role]
    return sorted(salt - supported)


def unsupported(opts: Mapping[str, Any], role: str) -> tuple[list[str], list[str]]:
    """(the ignored Salt settings, the unknown keys) among the keys of ``opts``, sorted; a key
    still at briny's default (one nothing acts on yet, say ``startup_states: ''``) was not set by
    the operator and is not named."""
    defaults = MASTER_DEFAULTS if role == "master" else MINION_DEFAULTS
    found: dict[str, list[str]] = {"ignored": [], "unknown": []}
    for key in sorted(map(str, opts)):
        if key in defaults and opts[key] == defaults[key]:
            continue
        kind = classify(role, key)
        if kind != "supported":
            found[kind].append(key)
    return found["ignored"], found["unknown"]


def warn_unsupported(opts: Mapping[str, Any]) -> None:
    """Log, once for this config, each key briny will not act on (daemon start). A set key briny
    supports is never named; neither is a key left at briny's default."""
    role = str(opts.get("__role") or "minion")
    source = opts.get("conf_file") or f"the {role} config"
    lost, unknown = unsupported(opts, role)
    if lost:
        log.warning(
            "%s: Salt settings briny does not support, accepted without effect (docs/migrating.md): %s",
            source,
            ", ".join(lost),
        )
    if unknown:
        log.warning(
            "%s: keys that are not Salt %s %s settings nor briny's, kept only as data for config.get: %s",
            source,
            SALT_VERSION,
            role,
            ", ".join(unknown),
        )


def _listing(keys: Iterable[str]) -> str:
    return textwrap.fill(", ".join(f"`{k}`" for k in keys), width=100, break_long_words=False, break_on_hyphens=False)


def markdown() -> str:
    """The list of ignored keys ``docs/migrating.md`` holds (between its markers)."""
    minion, master = set(ignored("minion")), set(ignored("master"))
    parts = [
        f"In both the master and the minion config ({len(minion & master)}):",
        _listing(sorted(minion & master)),
        f"Only in the minion config ({len(minion - master)}):",
        _listing(sorted(minion - master)),
        f"Only in the master config ({len(master - minion)}):",
        _listing(sorted(master - minion)),
    ]
    return "\n\n".join(parts) + "\n"
