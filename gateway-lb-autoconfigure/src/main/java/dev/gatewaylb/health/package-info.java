/**
 * Passive outlier detection and the retry budget. Pure Java.
 */
@NullMarked
package dev.gatewaylb.health;

import org.jspecify.annotations.NullMarked;
