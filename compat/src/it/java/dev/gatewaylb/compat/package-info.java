/**
 * A user's gateway with the starter, and the smoke test the compatibility matrix runs on
 * each Spring Boot version and transport (docs/compatibility.md).
 */
@NullMarked
package dev.gatewaylb.compat;

import org.jspecify.annotations.NullMarked;
