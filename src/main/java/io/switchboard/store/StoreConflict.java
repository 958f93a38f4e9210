package io.switchboard.store;

/** A write that would break the ledger's rules (e.g. ending a request that is not pending); the room fails it with CONFLICT. */
final class StoreConflict extends RuntimeException {
  StoreConflict(String message) {
    super(message, null, false, false);
  }
}
