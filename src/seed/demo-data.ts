import type { EntityManager } from "@mikro-orm/postgresql";
export async function loadDemoData(_em: EntityManager): Promise<boolean> { return false; }
