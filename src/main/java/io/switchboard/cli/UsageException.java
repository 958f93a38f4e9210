package io.switchboard.cli;

/** A command-line argument that is unknown or malformed; {@code argument} names it. */
public final class UsageException extends Exception {
  public UsageException(String argument, String problem) {
    super(argument + ": " + problem);
  }
}
