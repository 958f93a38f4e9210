package io.switchboard.config;

/** A configuration value that is missing, unknown or wrong; {@code key} names it (e.g. {@code http.port}). */
public final class ConfigException extends Exception {
  private final String key;

  public ConfigException(String key, String problem) {
    super(key + ": " + problem);
    this.key = key;
  }

  public String key() {
    return key;
  }
}
