"""Settings: the spec's defaults, a config file, DIFFERENTIAL_* variables over it, the sweep's 60 s floor."""
from differential_server.config import Settings, load_settings


def test_defaults_are_the_specs(monkeypatch):
    for key in ("ENABLED", "DEFAULT_TTL_HOURS", "SWEEP_SEC", "MAX_PER_DATABASE", "MERGE_TIMEOUT_SEC",
                "MERGE_MAX_ATTEMPTS", "CONFIG"):
        monkeypatch.delenv(f"DIFFERENTIAL_{key}", raising=False)
    s = Settings()
    assert (s.enabled, s.default_ttl_hours, s.sweep_sec, s.max_per_database, s.merge_timeout_sec,
            s.merge_max_attempts) == (True, 168, 300, 20, 600, 5)


def test_file_then_environment_then_options(tmp_path, monkeypatch):
    config = tmp_path / "server.toml"
    config.write_text('[branching]\nenabled = false\nmaxPerDatabase = 3\nsweep_sec = 10\ndefault-ttl-hours = 24\n'
                      'merge_max_attempts = 2\n')
    monkeypatch.setenv("DIFFERENTIAL_MERGE_MAX_ATTEMPTS", "9")
    s = load_settings(config, repository=tmp_path / "repo")
    assert s.enabled is False and s.default_ttl_hours == 24 and s.max_per_database == 3
    assert s.sweep_sec == 60  # the floor
    assert s.merge_max_attempts == 9  # the environment wins over the file
    assert s.repository == tmp_path / "repo" and s.state_path == tmp_path / "repo" / "review-server.sqlite"
