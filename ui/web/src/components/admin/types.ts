// Wire shapes of the admin endpoints (see server/users.go, groups.go,
// models.go, settings.go, connections.go), as the admin panel uses them.

/** An entry of GET /api/v1/users/ (UserModel + group_ids). */
export interface AdminUser {
  id: string;
  name: string;
  email: string;
  role: string;
  last_active_at?: number;
  created_at?: number;
  group_ids?: string[];
}

/** A permission tree: sections of boolean leaves (COMPAT §14.3). */
export type PermTree = Record<string, Record<string, boolean>>;

/** GroupResponse; user_ids is present for admins. */
export interface Group {
  id: string;
  name: string;
  description: string;
  permissions: PermTree | null;
  data?: Record<string, unknown> | null;
  user_ids?: string[];
  member_count: number;
}

/** One access grant of a model record (COMPAT §5.4); principal_id "*" = everyone. */
export interface Grant {
  principal_type: 'user' | 'group' | string;
  principal_id: string;
  permission: 'read' | 'write' | string;
}

/** A model record (ModelModel / ModelAccessResponse). */
export interface ModelRecord {
  id: string;
  name: string;
  base_model_id: string | null;
  params: Record<string, unknown> | null;
  meta: Record<string, unknown> | null;
  access_grants: Grant[] | null;
  is_active: boolean;
}

/** An entry of GET /api/models/base (a provider model). */
export interface BaseModel {
  id: string;
  name?: string;
  owned_by?: string;
  connection_type?: string;
}

/** One row of Hearth's GET /api/v1/configs/settings. */
export interface Setting {
  name: string;
  key: string;
  value: unknown;
  is_set?: boolean;
  source: string;
  persistent: boolean;
  stored: boolean;
  secret: boolean;
  restart_needed: boolean;
  section: string;
  type: string;
  enum?: string[];
  min?: number;
  max?: number;
  description: string;
}

/** A WEBUI_BANNERS entry. */
export interface BannerItem {
  id: string;
  type: string;
  title?: string;
  content: string;
  dismissible: boolean;
  timestamp: number;
}

/** The text of a failed call: api() throws ApiError carrying the server's detail. */
export const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export const enc = encodeURIComponent;
