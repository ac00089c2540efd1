/**
 * The {@code gateway.lb.*} configuration properties as the YAML spells them, validated
 * when they are bound.
 */
@NullMarked
package dev.gatewaylb.config;

import org.jspecify.annotations.NullMarked;
