/**
 * Traffic mirroring ({@code mirror}): a copy of a share of a service's requests sent to a
 * shadow service, whose answers are compared with the primary's and never reach the
 * client. This package maps the settings, keeps each service's counts and last
 * mismatches, decides and compares each mirrored request, and reports and meters it; the
 * exchange sends the copy through the shadow's own send path.
 */
@NullMarked
package dev.gatewaylb.internal.mirror;

import org.jspecify.annotations.NullMarked;
