/**
 * The version of every JSON document rmq-bench writes (--json, producer --ledger): a reader
 * refuses to interpret a document of a higher one. Raised when a field changes meaning or goes.
 */
export const SCHEMA_VERSION = 1;
