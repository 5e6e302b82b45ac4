import { TradeMappingSource } from './trade-category.entity';
import { NotFoundError } from '../../platform/errors/errors';
import type { ServiceContext } from '../../platform/service-context';
import { normalizeKey } from '../../platform/values/text';

export interface TradeCategoryView {
  id: string;
  code: string;
  name: string;
}

/**
 * Trade categories of a trade known by its name, service trade id or partner trade id (#29-#31).
 * Categories are reference data shared by every organization: no tenancy applies.
 */
export class TradeMappingService {
  constructor(private readonly sc: ServiceContext) {}

  /** #29: case and accent insensitive ("gros oeuvre" finds "Gros œuvre"). */
  byName(tradeName: string): Promise<TradeCategoryView[]> {
    return this.categories(TradeMappingSource.NAME, normalizeKey(tradeName));
  }

  /** #30: by the UUID of a trade-list trade. */
  byServiceTradeId(tradeId: string): Promise<TradeCategoryView[]> {
    return this.categories(TradeMappingSource.SVC, tradeId.toLowerCase());
  }

  /** #31: by the partner platform's trade id. */
  byPartnerTradeId(tradeId: string): Promise<TradeCategoryView[]> {
    return this.categories(TradeMappingSource.PARTNER, tradeId.trim());
  }

  /** A trade no mapping knows is not found, rather than a trade without categories. */
  private async categories(source: TradeMappingSource, key: string): Promise<TradeCategoryView[]> {
    const categories = await this.sc.em.execute<TradeCategoryView[]>(`
      select c.id, c.code, c.name
      from trade_category_mapping m join trade_category c on c.id = m.category_id
      where m.source = ? and m.key = ?
      order by c.code, c.id`, [source, key]);
    if (!categories.length) throw new NotFoundError('No trade category is mapped to this trade');
    return categories.map((c) => ({ id: c.id, code: c.code, name: c.name }));
  }
}
